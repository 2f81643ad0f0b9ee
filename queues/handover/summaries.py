"""The summaries a live reader hands a view of many queues, kept between views.

A view of 50,000 queues asks the reader for every queue's summary. Looked up afresh each
time, that is a few dict look-ups a queue, 0.1 to 0.2 s of one step of the event loop; here the
last long list asked is kept with its answer, and the next view that asks for the same queues
looks again only at those the reader changed since (its change log, ``LiveCounts.changes``)
and at those due a re-read. The answer is the same as :meth:`SummaryHandover.full`'s, which
states the rules; the tests compare the two. The kept list can also be made ahead of the views,
a slice of queues a step of the event loop (:meth:`SummaryHandover.preparing`), so that the
first view after the reader vouches does not make it in one step.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from queues.live.count_changes import LiveCounts
from queues.live.streams import StreamReader
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef

# Below this many queues a view's summaries are looked up afresh (cheap), and the kept list
# of a view of every queue stays as it is.
KEEP_FROM = 1000
# Queues looked up in one step of the event loop when the kept list is made ahead of views.
SLICE = 5000


@dataclass
class _Kept:
    """One list of queues as asked, and each one's summary as handed then (None: left out),
    in the list's order. Copied, a dict keeps its keys' hashes: made afresh, it would ask
    each of 50,000 queues for its hash again (a Python call each)."""

    asked: list[QueueRef]
    handed: dict[QueueRef, QueueSummary | None]
    missing: set[QueueRef]  # the queues handed None
    era: str
    change_number: int
    followed_changes: int


class SummaryHandover:
    def __init__(self, counts: LiveCounts, streams: StreamReader) -> None:
        self.counts = counts
        self.streams = streams
        self._kept: _Kept | None = None

    def summaries(self, refs: Iterable[QueueRef], slack: float) -> dict[QueueRef, QueueSummary]:
        """The summaries of ``refs`` the reader knows now, for a page: as :meth:`full`
        answers, at the cost of what changed since the same queues were last asked for."""
        asked = refs if isinstance(refs, list) else list(refs)
        if len(asked) < KEEP_FROM:
            return self.full(asked, slack)
        counts = self.counts
        kept = self._kept
        if kept is None or not self.keeps(asked):
            kept = self._make(asked)
            if kept is None:
                return self.full(asked, slack)
        else:
            handed, missing = kept.handed, kept.missing
            for ref in counts.changed_since(kept.change_number):
                if ref in handed:  # in place: the order stays the list's
                    now = handed[ref] = self._one(ref)
                    if now is None:
                        missing.add(ref)
                    else:
                        missing.discard(ref)
            kept.change_number = counts.change_number
        found = kept.handed.copy()
        for ref in kept.missing:
            del found[ref]
        overdue = time.monotonic() - slack
        for ref, due in counts.resync_at.items():  # only queues whose counts moved lately
            if due < overdue:
                found.pop(ref, None)
        return cast(dict[QueueRef, QueueSummary], found)

    def _make(self, asked: list[QueueRef]) -> _Kept | None:
        """Every queue of ``asked`` looked up afresh, kept for the next view (None: a list
        naming a queue twice, not kept)."""
        one, number = self._one, self.counts.change_number
        return self._keep(asked, {ref: one(ref) for ref in asked}, number)

    def _keep(
        self, asked: list[QueueRef], handed: dict[QueueRef, QueueSummary | None], number: int
    ) -> _Kept | None:
        """``handed`` kept as what the reader knew of ``asked`` at change ``number``: the
        queues changed after it are looked at again by the next view."""
        if len(handed) != len(asked):
            return None
        counts = self.counts
        missing = {ref for ref, summary in handed.items() if summary is None}
        made = _Kept(
            list(asked), handed, missing, counts.era, number, self.streams.followed_changes
        )
        self._kept = made
        return made

    def keeps(self, asked: list[QueueRef]) -> bool:
        """Whether the next view asking for ``asked`` finds them kept."""
        kept = self._kept
        return (
            kept is not None
            and kept.era == self.counts.era
            and kept.followed_changes == self.streams.followed_changes
            and kept.asked == asked  # equal lists of the same objects compare at C speed
        )

    def preparing(self, asked: list[QueueRef]) -> Iterator[None]:
        """Keeps ``asked``'s summaries for the next view that asks for the same queues,
        looking up ``SLICE`` queues between stops (a caller on the event loop awaits at each).
        Nothing is kept when the reader's era or followed queues changed meanwhile; queues
        whose counts changed meanwhile are looked at again by that view."""
        if len(asked) < KEEP_FROM or self.keeps(asked):
            return
        counts, streams, one = self.counts, self.streams, self._one
        era, followed, number = counts.era, streams.followed_changes, counts.change_number
        handed: dict[QueueRef, QueueSummary | None] = {}
        for start in range(0, len(asked), SLICE):
            if start:
                yield
                if counts.era != era or streams.followed_changes != followed:
                    return
            for ref in asked[start : start + SLICE]:
                handed[ref] = one(ref)
        self._keep(asked, handed, number)

    def _one(self, ref: QueueRef) -> QueueSummary | None:
        """``ref``'s summary as a page is given it whatever the time, or None when the page must
        read it: not followed, never read, an event the estimate could not follow, or a read
        in flight."""
        counts = self.counts
        summary = counts.summaries.get(ref)
        if summary is None or ref in counts.uncertain or ref in counts.reading:
            return None
        if not self.streams.follows(ref):
            return None
        estimates = counts.estimates
        # The same summary while the counts stay: a view of 50,000 queues makes no copies.
        base, shown = counts.shown.get(ref, (None, None))
        if base is summary and shown and estimates.holds(ref, shown.counts, shown.paused):
            return shown
        if not estimates.known(ref):
            return None
        shown = dataclasses.replace(
            summary, counts=estimates.counts(ref), paused=estimates.paused(ref)
        )
        counts.shown[ref] = (summary, shown)
        return shown

    def full(self, refs: Iterable[QueueRef], slack: float) -> dict[QueueRef, QueueSummary]:
        """The summaries of ``refs`` the reader knows now, each looked up: left out when the
        page must read it (:meth:`_one`), or when a re-read is overdue by over ``slack`` s."""
        overdue = time.monotonic() - slack
        resync_at = self.counts.resync_at
        found: dict[QueueRef, QueueSummary] = {}
        for ref in refs:
            due = resync_at.get(ref)
            if due is not None and due < overdue:
                continue
            shown = self._one(ref)
            if shown is not None:
                found[ref] = shown
        return found
