"""The overview's kept list (overview_ledger.py) answers what ``list_queues`` answers from every
queue's row made afresh: the same rows, order, totals, groups, matches and pages, for every
filter, order and grouping, after counts change, queues pause and resume, and queues come and
go. Ties in names and counts are many, so that their order is compared too."""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import pytest

from dashboard.api.serializers import queue_json
from dashboard.pages import overview_ledger, overview_page
from dashboard.pages.overview_ledger import OverviewLedger, ViewFacts
from dashboard.pages.overview_list import SORTS, Listing, ListQuery, group_key, list_queues
from queues.reads.counts import QueueSummary
from queues.reads.keys import STATES, QueueRef

NAMES = ("mail", "Mail", "billing", "t1-mail", "t1-billing", "T1-mail", "t2-mail", "t2-x-y")


def make(rng: random.Random, ref: QueueRef) -> QueueSummary:
    # Counts of 0 to 2: most queues tie with others in every state.
    counts = {state: rng.choice((0, 0, 1, 2)) for state in STATES}
    problems = ("meta: WRONGTYPE",) if rng.random() < 0.05 else ()
    return QueueSummary(ref, counts, rng.random() < 0.2, None, None, "bullmq:6", problems)


def refs(count: int) -> list[QueueRef]:
    made = {
        QueueRef(prefix, f"{NAMES[n % len(NAMES)]}-{n // len(NAMES) % 3}" if n else "x")
        for n in range(count)
        for prefix in ("bull", "other")
    }
    return sorted(made)


def facts_for(rng: random.Random, found: list[QueueSummary], workers: bool) -> ViewFacts:
    alerts = {s.ref: [{"rule": "waiting", "status": "firing"}] for s in found if rng.random() < 0.1}
    stuck = {s.ref: rng.choice((0, 1, 3)) for s in found if s.counts["active"]}
    counted = {s.ref.slug: 1 for s in found if rng.random() < 0.5} if workers else None
    return ViewFacts(alerts, counted, stuck)


def rows_afresh(found: list[QueueSummary], facts: ViewFacts) -> list[dict[str, Any]]:
    """Every queue's row as a view made them before the ledger (its alerts, workers, stuck)."""
    rows = []
    for summary in found:
        row = queue_json(summary)
        row["alerts"] = list(facts.alerts.get(summary.ref, ()))
        if facts.workers is not None:
            row["workers"] = facts.workers.get(row["slug"], 0)
        if facts.stuck.get(summary.ref):
            row["stuck"] = facts.stuck[summary.ref]
        rows.append(row)
    return rows


def shape(listing: Listing) -> dict[str, Any]:
    return {
        "queues": listing.queues,
        "groups": [group.as_json() for group in listing.groups],
        "total": listing.total,
        "matching": listing.matching,
        "pages": listing.pages,
        "page": listing.page,
        "totals": listing.totals,
    }


def queries(found: list[QueueSummary]) -> list[ListQuery]:
    made = []
    for sort in SORTS:
        for way in (sort, f"-{sort}"):
            for text in ("", "mail", "T1-", "\x00", "nothing"):
                made.append(ListQuery(text=text, sort=way, per_page=7, page=2))
            made.append(ListQuery(problems=True, sort=way, per_page=25))
            made.append(ListQuery(problems=True, text="bill", sort=way, per_page=25, page=9))
    for grouping in ("head", "tail", "prefix", "connection"):
        for delimiter in ("-", ""):
            keys = {
                group_key({"name": s.ref.name, "prefix": s.ref.prefix}, grouping, delimiter)
                for s in found
            }
            for sort in ("name", "-name", "-failed", "waiting"):
                base = ListQuery(group=grouping, delimiter=delimiter, sort=sort, per_page=5)
                made += [base, dataclasses.replace(base, text="t1", problems=True, page=2)]
                made += [dataclasses.replace(base, within=key) for key in sorted(keys)[:3]]
                made.append(dataclasses.replace(base, within="no such group", text="mail"))
    return made


def compare(ledger: OverviewLedger, found: list[QueueSummary], rng: random.Random) -> None:
    ledger.update(found)
    for query in queries(found):
        # Workers are counted for the problems and groups, as read_listing does.
        facts = facts_for(rng, found, workers=query.problems or bool(query.group))
        kept = ledger.listing(query, facts)
        afresh = list_queues(rows_afresh(found, facts), query)
        assert shape(kept) == shape(afresh), query


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_kept_list_answers_as_every_row_made_afresh(seed: int) -> None:
    rng = random.Random(seed)
    every = refs(60)
    found = [make(rng, ref) for ref in every]
    ledger = OverviewLedger()
    compare(ledger, found, rng)
    for _ in range(6):
        # A few queues change (counts, paused), the others hand in the same summaries.
        found = list(found)
        for p in rng.sample(range(len(found)), 8):
            found[p] = make(rng, found[p].ref)
        compare(ledger, found, rng)
    # Queues come and go.
    found = [s for s in found if rng.random() < 0.8] + [
        make(rng, QueueRef("bull", f"new-{n}")) for n in range(5)
    ]
    found.sort(key=lambda s: s.ref)
    compare(ledger, found, rng)
    compare(ledger, [], rng)


def test_many_changes_at_once_sort_the_kept_orders_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overview_ledger, "_MOVES", 2)
    rng = random.Random(7)
    found = [make(rng, ref) for ref in refs(80)]
    ledger = OverviewLedger()
    compare(ledger, found, rng)
    found = list(found)
    for p in rng.sample(range(len(found)), 20):
        found[p] = make(rng, found[p].ref)
    ledger.update(found)
    assert set(ledger.orders) <= {"name", "-name"}
    compare(ledger, found, rng)


def test_a_change_moves_a_queue_within_the_kept_orders() -> None:
    every = [QueueRef("bull", name) for name in "abcde"]

    def summary(ref: QueueRef, failed: int, paused: bool = False) -> QueueSummary:
        counts = dict.fromkeys(STATES, 0) | {"failed": failed}
        return QueueSummary(ref, counts, paused, None, None, None)

    ledger = OverviewLedger()
    found = [summary(ref, 1 if ref.name in "ab" else 0) for ref in every]
    ledger.update(found)
    most = ledger.listing(ListQuery(sort="-failed"), ViewFacts())
    assert [q["name"] for q in most.queues] == ["a", "b", "c", "d", "e"]  # ties by name
    found = [*found[:2], summary(every[2], 5, paused=True), *found[3:]]
    ledger.update(found)
    assert ledger.orders["-failed"] == [2, 0, 1, 3, 4]  # moved, not sorted again
    most = ledger.listing(ListQuery(sort="-failed", problems=True), ViewFacts())
    assert [q["name"] for q in most.queues] == ["c", "a", "b"]
    assert most.totals["failed"] == 7
    assert most.queues[0]["attention"] == ["failed jobs", "paused"]


def test_a_remake_a_slice_at_a_time_answers_as_one_made_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(overview_ledger, "SLICE", 7)
    rng = random.Random(11)
    found = [make(rng, ref) for ref in refs(60)]
    ledger = OverviewLedger()
    assert ledger.stale(found)
    stops = sum(1 for _ in ledger.remaking(found))
    assert stops == math.ceil(len(found) / 7) - 1  # a stop after every slice but the last
    assert not ledger.stale(found)
    made = ledger.made
    compare(ledger, found, rng)  # its update finds nothing to make again
    assert ledger.made == made


def test_a_remake_overtaken_by_a_view_is_not_put_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(overview_ledger, "SLICE", 7)
    rng = random.Random(12)
    every = refs(60)
    older = [make(rng, ref) for ref in every]
    newer = [make(rng, ref) for ref in every[1:]]
    ledger = OverviewLedger()
    remaking = ledger.remaking(older)
    next(remaking)
    ledger.update(newer)  # a view that came first makes the ledger itself
    assert list(remaking) == [None] * (math.ceil(len(older) / 7) - 2)
    assert ledger.summaries == newer
    compare(ledger, newer, rng)


async def test_a_list_made_ahead_from_most_queues_answers_once_a_view_hands_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(overview_ledger, "SLICE", 7)
    ledger = OverviewLedger()
    monkeypatch.setattr(overview_page, "_ledger", ledger)
    rng = random.Random(13)
    every = refs(60)
    found = [make(rng, ref) for ref in every]
    # The reader vouches for too few: nothing made ahead (a view reads most of them).
    have = {s.ref: s for s in found if rng.random() < 0.5}
    assert await overview_page.prepare_listing(every, have) == 0
    # Most of them: the others stand with no counts until a view hands them in.
    have = {s.ref: s for s in found[: len(found) * 9 // 10]}
    assert await overview_page.prepare_listing(every, have) == 1
    assert ledger.summaries[-1].counts == {}
    compare(ledger, found, rng)
    assert ledger.made == 1  # the view changed the queues it read, made nothing whole
    # All of them, some changed since: the changes taken ahead of the view.
    found = [make(rng, s.ref) if rng.random() < 0.1 else s for s in found]
    assert await overview_page.prepare_listing(every, {s.ref: s for s in found}) == 1
    assert ledger.summaries == found
    compare(ledger, found, rng)
