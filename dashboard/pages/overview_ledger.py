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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dashboard.api.serializers import queue_json
from dashboard.pages.overview_list import (
    COLUMNS,
    Group,
    Groups,
    Listing,
    ListQuery,
    groups_of,
    in_order,
    page_count,
    page_of,
    queue_problems,
)
from queues.alerts.kept import KeptAlerts
from queues.config.queue_options import queue_options
from queues.config.settings import get_config
from queues.reads.counts import QueueSummary
from queues.reads.dead_letters import dead_letter_name, is_dead_letter_queue
from queues.reads.keys import QueueRef

# Past this share of queues changed since the last view, the ledger is made again whole (a
# view that read every queue from Redis hands in new summaries for all of them).
REMAKE_SHARE = 0.25
# Past this many changed queues, the kept count orders are sorted again when next asked for
# instead of each changed queue being moved in them.
_MOVES = 256
# Groupings (what by, which delimiter) kept at once: the delimiter is the viewer's to choose.
_GROUPINGS_KEPT = 4
# Queues whose words are kept (past it, forgotten whole): above the queues of one view.
_WORDS_KEPT = 200_000
# Joins a queue's name, display name and slug into one text for the filter.
_JOIN = "\x00"
# Queues a remake works through in one step of the event loop when made in the background.
SLICE = 5000
_COUNTS = operator.itemgetter(*COLUMNS)


@dataclass(frozen=True)
class ViewFacts:
    """What one view read beside the counts. ``alerts``: the alerts firing on a queue, as the
    list shows them (queues without any left out); ``workers``: connected workers by slug, or
    None when they were not counted; ``stuck``: stuck jobs by queue."""

    alerts: Mapping[QueueRef, list[dict[str, Any]]] = field(default_factory=dict)
    workers: Mapping[str, int] | None = None
    stuck: Mapping[QueueRef, int] = field(default_factory=dict)


class _Names(NamedTuple):
    """A queue's words, for the order (``sort``) and the filter (``text``, ``fields``).
    A tuple: made for each of 50,000 queues when first listed."""

    sort: str
    text: str
    fields: tuple[str, str, str]
    slug: str


def _shown(summary: QueueSummary) -> tuple[int, ...]:
    counts = summary.counts
    try:
        return tuple(map(int, _COUNTS(counts)))  # every state counted: one C call
    except KeyError:
        return tuple(int(counts.get(state, 0)) for state in COLUMNS)


def _column(sort: str) -> int:
    """Where a count order's state is in each queue's shown counts."""
    return COLUMNS.index(sort.lstrip("-"))


def _flagged(summary: QueueSummary) -> bool:
    """A problem of the queue's own, whatever the view read beside it."""
    return bool(summary.counts.get("failed") or summary.paused or summary.problems)


def _backlogged(summary: QueueSummary, slug: str, dead_letter: str) -> bool:
    """Jobs wait on a queue that is not paused: a problem when no worker is connected.
    ``dead_letter``: the dead-letter queue's name, which a slug holds when it may be its."""
    counts = summary.counts
    backlog = counts.get("waiting", 0) + counts.get("prioritized", 0) + counts.get("paused", 0)
    if not backlog or summary.paused:
        return False
    return dead_letter not in slug or not is_dead_letter_queue(slug)


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
        self.groupings: dict[tuple[str, str], Groups] = {}
        # Each queue's words while the settings stay (display names come from them).
        self._words: dict[QueueRef, _Names] = {}
        self.alerts = KeptAlerts()  # the count rules' verdicts, evaluated where inputs changed
        self.made = 0  # times made whole: a remake begun before another is not put in place

    # ---- keeping up with the summaries -------------------------------------------------------

    def update(self, found: Sequence[QueueSummary]) -> None:
        """Take this view's summaries (every queue it lists, in the order of discovery)."""
        changed = self._changes(found)
        if changed is None:
            for _ in self.remaking(found):
                pass
            return
        if len(changed) > _MOVES:
            for sort in [sort for sort in self.orders if sort.lstrip("-") != "name"]:
                del self.orders[sort]
        for p in changed:
            self._change(p, found[p])

    def stale(self, found: Sequence[QueueSummary]) -> bool:
        """Whether taking ``found`` would make the ledger again whole."""
        return self._changes(found) is None

    def _changes(self, found: Sequence[QueueSummary]) -> list[int] | None:
        """The places whose summary changed, or None when the ledger must be made again."""
        was = self.summaries
        if get_config() is not self.config or len(found) != len(was):
            return None
        changed = list(itertools.compress(range(len(found)), map(operator.is_not, found, was)))
        if len(changed) > len(found) * REMAKE_SHARE:
            return None
        for p in changed:
            if found[p].ref != was[p].ref:  # a queue came as another went
                return None
        return changed

    def summary_of(self, ref: QueueRef) -> QueueSummary:
        """``ref``'s summary as kept, or one with no counts when it has none."""
        p = self.position.get(ref)
        return (
            self.summaries[p] if p is not None else QueueSummary(ref, {}, False, None, None, None)
        )

    def remaking(self, found: Sequence[QueueSummary]) -> Iterator[None]:
        """Made again whole from ``found``, stopping after each ``SLICE`` queues (a caller
        on the event loop awaits there). What is made is put in place at once at the end,
        unless the ledger was made again meanwhile or the settings changed."""
        config, made = get_config(), self.made
        if config is not self.config:
            self._words.clear()  # display names come from the settings
        found = list(found)
        given = bool(config.get("QUEUE_OPTIONS"))
        dead_letter = dead_letter_name()
        names: list[_Names] = []
        shown: list[tuple[int, ...]] = []
        flagged: set[int] = set()
        backlogged: set[int] = set()
        busy: set[int] = set()
        for start in range(0, len(found), SLICE):
            for p, summary in enumerate(found[start : start + SLICE], start):
                words = self._words.get(summary.ref) or self._names_of(summary.ref, given)
                names.append(words)
                shown.append(_shown(summary))
                if _flagged(summary):
                    flagged.add(p)
                if _backlogged(summary, words.slug, dead_letter):
                    backlogged.add(p)
                if summary.counts.get("active"):
                    busy.add(p)
            if start + SLICE < len(found):
                yield
        if self.made != made or get_config() is not config:
            return
        self.made += 1
        self.config = config
        self.summaries = found
        self.position = {summary.ref: p for p, summary in enumerate(found)}
        self.names = names
        self.shown = shown
        self.totals = [sum(column) for column in zip(*shown, strict=True)] or [0] * len(COLUMNS)
        self.flagged, self.backlogged, self.busy = flagged, backlogged, busy
        sort = [words.sort for words in names]
        by_name = sorted(range(len(found)), key=sort.__getitem__)  # ties: discovery order
        self.rank = [0] * len(found)
        for place, p in enumerate(by_name):
            self.rank[p] = place
        self.orders = {"name": by_name}
        self.groupings = {}

    def _names_of(self, ref: QueueRef, given: bool) -> _Names:
        """``ref``'s words, kept. ``given``: some queue has options (else none has a display
        name of its own, and none is looked up)."""
        if len(self._words) >= _WORDS_KEPT:
            self._words.clear()  # queues gone long ago
        slug = ref.slug
        name = str(ref.name)
        display = str(queue_options(slug).get("display_name") or name) if given else name
        folded = name.casefold()
        fields = (folded, display.casefold() if display is not name else folded, slug.casefold())
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
            (self.backlogged, _backlogged(summary, self.names[p].slug, dead_letter_name())),
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

    def _grouping(self, grouping: str, delimiter: str) -> Groups:
        kept = self.groupings.get((grouping, delimiter))
        if kept is not None:
            return kept
        made = groups_of(self.summaries, self.shown, grouping, delimiter)
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
