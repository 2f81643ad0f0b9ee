"""What the overview's list needs of every queue, kept between views: each queue's shown
counts, name and problem flags, the totals, and the orders the list offers (by name, by each
count, either way). A view hands in the summaries it took; the live reader hands the same
objects while a queue's counts stay, so only the queues whose summary changed are worked on
again. A page is then a slice of a kept order, and its rows are the only ones made.

It answers what ``overview_list.list_queues`` answers for the same queues (filter, problems,
groups, order, page): that function states the rules, this one keeps their results; the
tests compare the two.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashboard.api.serializers import queue_json
from dashboard.pages.overview_list import (
    COLUMNS,
    Group,
    Listing,
    ListQuery,
    group_key,
    in_order,
    page_count,
    page_of,
    queue_problems,
)
from queues.alerts.kept import KeptAlerts
from queues.config.queue_options import queue_options
from queues.config.settings import get_config
from queues.reads.counts import QueueSummary
from queues.reads.dead_letters import is_dead_letter_queue
from queues.reads.keys import QueueRef

# Past this share of queues changed since the last view, the ledger is made again whole (a
# view that read every queue from Redis hands in new summaries for all of them).
_REMAKE_SHARE = 0.25
# Past this many changed queues, the kept count orders are sorted again when next asked for
# instead of each changed queue being moved in them.
_MOVES = 256
# Groupings (what by, which delimiter) kept at once: the delimiter is the viewer's to choose.
_GROUPINGS_KEPT = 4
# Queues whose words are kept (past it, forgotten whole): above the queues of one view.
_WORDS_KEPT = 200_000
# Joins a queue's name, display name and slug into one text for the filter.
_JOIN = "\x00"


@dataclass(frozen=True)
class ViewFacts:
    """What one view read beside the counts. ``alerts``: the alerts firing on a queue, as the
    list shows them (queues without any left out); ``workers``: connected workers by slug, or
    None when they were not counted; ``stuck``: stuck jobs by queue."""

    alerts: Mapping[QueueRef, list[dict[str, Any]]] = field(default_factory=dict)
    workers: Mapping[str, int] | None = None
    stuck: Mapping[QueueRef, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Names:
    """A queue's words, for the order (``sort``) and the filter (``text``, ``fields``)."""

    sort: str
    text: str
    fields: tuple[str, str, str]
    slug: str


@dataclass
class _Grouping:
    """One grouping's groups: each queue's key, each group's queues (in the list's order of
    discovery), counts summed over them and paused queues."""

    keys: list[str]
    members: dict[str, list[int]]
    sums: dict[str, list[int]]
    paused: dict[str, int]


def _shown(summary: QueueSummary) -> tuple[int, ...]:
    counts = summary.counts
    return tuple(int(counts.get(state, 0)) for state in COLUMNS)


def _column(sort: str) -> int:
    """Where a count order's state is in each queue's shown counts."""
    return COLUMNS.index(sort.lstrip("-"))


def _flagged(summary: QueueSummary) -> bool:
    """A problem of the queue's own, whatever the view read beside it."""
    return bool(summary.counts.get("failed") or summary.paused or summary.problems)


def _backlogged(summary: QueueSummary, slug: str) -> bool:
    """Jobs wait on a queue that is not paused: a problem when no worker is connected."""
    counts = summary.counts
    backlog = counts.get("waiting", 0) + counts.get("prioritized", 0) + counts.get("paused", 0)
    return bool(backlog) and not summary.paused and not is_dead_letter_queue(slug)


class OverviewLedger:
    def __init__(self) -> None:
        self.config: object = None
        self.summaries: list[QueueSummary] = []
        self.position: dict[QueueRef, int] = {}
        self.names: list[_Names] = []
        self.shown: list[tuple[int, ...]] = []
        self.totals = [0] * len(COLUMNS)
        self.flagged: set[int] = set()
        self.backlogged: set[int] = set()
        self.busy: set[int] = set()  # queues with active jobs (their stuck jobs are read)
        self.rank: list[int] = []  # each queue's place in the order by name
        self.orders: dict[str, list[int]] = {}  # a sort → the queues in its order
        self.groupings: dict[tuple[str, str], _Grouping] = {}
        # Each queue's words while the settings stay (display names come from them).
        self._words: dict[QueueRef, _Names] = {}
        self.alerts = KeptAlerts()  # the count rules' verdicts, evaluated where inputs changed

    # ---- keeping up with the summaries -------------------------------------------------------

    def update(self, found: Sequence[QueueSummary]) -> None:
        """Take this view's summaries (every queue it lists, in the order of discovery)."""
        config = get_config()
        was = self.summaries
        if config is not self.config or len(found) != len(was):
            self._remake(found, config)
            return
        changed = list(itertools.compress(range(len(found)), map(operator.is_not, found, was)))
        if len(changed) > len(found) * _REMAKE_SHARE:
            self._remake(found, config)
            return
        for p in changed:
            if found[p].ref != was[p].ref:  # a queue came as another went
                self._remake(found, config)
                return
        if len(changed) > _MOVES:
            for sort in [sort for sort in self.orders if sort.lstrip("-") != "name"]:
                del self.orders[sort]
        for p in changed:
            self._change(p, found[p])

    def _remake(self, found: Sequence[QueueSummary], config: object) -> None:
        if config is not self.config:
            self._words.clear()
        self.config = config
        self.summaries = list(found)
        self.position = {summary.ref: p for p, summary in enumerate(found)}
        self.names = [self._names_of(summary.ref) for summary in found]
        self.shown = [_shown(summary) for summary in found]
        self.totals = [sum(column) for column in zip(*self.shown, strict=True)] or [0] * len(
            COLUMNS
        )
        self.flagged = {p for p, summary in enumerate(found) if _flagged(summary)}
        self.backlogged = {p for p, s in enumerate(found) if _backlogged(s, self.names[p].slug)}
        self.busy = {p for p, summary in enumerate(found) if summary.counts.get("active")}
        sort = [names.sort for names in self.names]
        by_name = sorted(range(len(found)), key=sort.__getitem__)  # ties: discovery order
        self.rank = [0] * len(found)
        for place, p in enumerate(by_name):
            self.rank[p] = place
        self.orders = {"name": by_name}
        self.groupings = {}

    def _names_of(self, ref: QueueRef) -> _Names:
        kept = self._words.get(ref)
        if kept is None:
            if len(self._words) >= _WORDS_KEPT:
                self._words.clear()  # queues gone long ago
            slug = ref.slug
            display = str(queue_options(slug).get("display_name") or ref.name)
            fields = (str(ref.name).casefold(), display.casefold(), slug.casefold())
            kept = self._words[ref] = _Names(fields[1], _JOIN.join(fields), fields, slug)
        return kept

    def _change(self, p: int, summary: QueueSummary) -> None:
        before, after = self.shown[p], _shown(summary)
        was = self.summaries[p]
        if before != after:
            moved = [
                (sort, order)
                for sort, order in self.orders.items()
                if sort.lstrip("-") != "name" and before[_column(sort)] != after[_column(sort)]
            ]
            for sort, order in moved:
                key = self._key(sort)
                place = bisect.bisect_left(order, key(p), key=key)
                if place < len(order) and order[place] == p:
                    del order[place]
                else:  # not where its counts put it: sorted again when next asked for
                    del self.orders[sort]
            self.shown[p] = after
            for sort, order in moved:
                if sort in self.orders:
                    bisect.insort(order, p, key=self._key(sort))
            for column, (old, new) in enumerate(zip(before, after, strict=True)):
                self.totals[column] += new - old
            for grouping in self.groupings.values():
                sums = grouping.sums[grouping.keys[p]]
                for column, (old, new) in enumerate(zip(before, after, strict=True)):
                    sums[column] += new - old
        if bool(was.paused) != bool(summary.paused):
            for grouping in self.groupings.values():
                grouping.paused[grouping.keys[p]] += 1 if summary.paused else -1
        self.summaries[p] = summary
        for kept, holds in (
            (self.flagged, _flagged(summary)),
            (self.backlogged, _backlogged(summary, self.names[p].slug)),
            (self.busy, bool(summary.counts.get("active"))),
        ):
            if holds:
                kept.add(p)
            else:
                kept.discard(p)

    # ---- orders and groups ------------------------------------------------------------------

    def _key(self, sort: str) -> Callable[[int], tuple[int, int]]:
        """A count order's key: the count (the most first when descending), then the name."""
        column, shown, rank = _column(sort), self.shown, self.rank
        if sort.startswith("-"):
            return lambda p: (-shown[p][column], rank[p])
        return lambda p: (shown[p][column], rank[p])

    def _order(self, sort: str) -> list[int]:
        """Every queue in the order ``sort`` names, kept for the next view (not to be changed)."""
        kept = self.orders.get(sort)
        if kept is None:
            kept = self.orders[sort] = self._sorted(range(len(self.summaries)), sort)
        return kept

    def _sorted(self, positions: Sequence[int] | range, sort: str) -> list[int]:
        """``positions``, in the order of discovery, in the order ``sort`` names."""
        if sort == "name":
            return sorted(positions, key=self.rank.__getitem__)
        if sort == "-name":
            # Equal names keep the order of discovery, as a reversed stable sort does.
            names = self.names
            return sorted(positions, key=lambda p: names[p].sort, reverse=True)
        return sorted(positions, key=self._key(sort))

    def _grouping(self, grouping: str, delimiter: str) -> _Grouping:
        kept = self.groupings.get((grouping, delimiter))
        if kept is not None:
            return kept
        keys = [
            group_key(
                {"name": s.ref.name, "prefix": s.ref.prefix, "connection": s.ref.connection},
                grouping,
                delimiter,
            )
            for s in self.summaries
        ]
        made = _Grouping(keys, {}, {}, {})
        for p, key in enumerate(keys):
            made.members.setdefault(key, []).append(p)
            sums = made.sums.setdefault(key, [0] * len(COLUMNS))
            for column, n in enumerate(self.shown[p]):
                sums[column] += n
            made.paused[key] = made.paused.get(key, 0) + bool(self.summaries[p].paused)
        if len(self.groupings) >= _GROUPINGS_KEPT:
            del self.groupings[next(iter(self.groupings))]
        self.groupings[(grouping, delimiter)] = made
        return made

    # ---- one view ---------------------------------------------------------------------------

    def busy_refs(self) -> list[QueueRef]:
        """The queues with active jobs, whose stuck jobs a view reads."""
        return [self.summaries[p].ref for p in sorted(self.busy)]

    def problems(self, facts: ViewFacts) -> set[int]:
        """The queues an on-call person should look at (``queue_problems`` not empty)."""
        found = set(self.flagged)
        position = self.position
        found.update(position[ref] for ref in facts.alerts if ref in position)
        found.update(position[ref] for ref, n in facts.stuck.items() if n and ref in position)
        workers = facts.workers
        if workers is not None:
            names = self.names
            found.update(p for p in self.backlogged if not workers.get(names[p].slug, 0))
        return found

    def _test(self, needle: str, problems: set[int] | None) -> Callable[[int], bool] | None:
        """Whether a queue passes the filter; None when every queue does."""
        if not needle and problems is None:
            return None
        names = self.names

        def named(p: int) -> bool:
            return needle in names[p].text

        def named_apart(p: int) -> bool:  # a needle holding the join would match across it
            return any(needle in words for words in names[p].fields)

        by_name = named_apart if _JOIN in needle else named
        if problems is None:
            return by_name
        if not needle:
            return problems.__contains__
        return lambda p: p in problems and by_name(p)

    def listing(self, query: ListQuery, facts: ViewFacts) -> Listing:
        """One page of the list, as ``list_queues`` makes it from every queue's row."""
        total = len(self.summaries)
        needle = query.text.strip().casefold()
        problems = self.problems(facts) if query.problems else None
        test = self._test(needle, problems)
        totals = dict(zip(COLUMNS, self.totals, strict=True))
        if not query.group or query.within is not None:
            if query.within is not None and query.group:
                members = self._grouping(query.group, query.delimiter).members
                within = members.get(query.within, [])
                ordered = self._sorted([p for p in within if test is None or test(p)], query.sort)
            else:
                order = self._order(query.sort)
                ordered = order if test is None else [p for p in order if test(p)]
            pages = page_count(len(ordered), query.per_page)
            rows = [self._row(p, facts) for p in page_of(ordered, query.page, query.per_page)]
            return Listing(query, rows, [], total, len(ordered), pages, totals)

        # Grouped: a group is listed when one of its queues passes the filter; its counts are
        # those of all its queues.
        grouping = self._grouping(query.group, query.delimiter)
        if test is None:
            passing = {key: len(members) for key, members in grouping.members.items()}
        else:
            passing = {}
            for p in filter(test, range(total)):
                key = grouping.keys[p]
                passing[key] = passing.get(key, 0) + 1
        troubled: dict[str, int] = {}
        for p in problems if problems is not None else self.problems(facts):
            key = grouping.keys[p]
            troubled[key] = troubled.get(key, 0) + 1
        groups = [
            Group(
                key=key,
                counts=dict(zip(COLUMNS, grouping.sums[key], strict=True)),
                queues=len(grouping.members[key]),
                matching=matching,
                paused=grouping.paused[key],
                problems=troubled.get(key, 0),
            )
            for key, matching in passing.items()
        ]
        ordered_groups = in_order(groups, query, lambda g: g.key, lambda g: g.counts)
        pages = page_count(len(ordered_groups), query.per_page)
        shown = page_of(ordered_groups, query.page, query.per_page)
        return Listing(query, [], shown, total, sum(passing.values()), pages, totals)

    def _row(self, p: int, facts: ViewFacts) -> dict[str, Any]:
        """One queue of the page as the list shows it (the API's fields and the page's)."""
        summary = self.summaries[p]
        row = queue_json(summary)
        row["alerts"] = list(facts.alerts.get(summary.ref, ()))
        if facts.workers is not None:
            row["workers"] = facts.workers.get(row["slug"], 0)
        stuck = facts.stuck.get(summary.ref)
        if stuck:
            row["stuck"] = stuck
        row["shownCounts"] = dict(zip(COLUMNS, self.shown[p], strict=True))
        row["attention"] = queue_problems(row)
        return row
