"""The closed minutes of history the alert rules read, kept decoded per queue between passes,
so that the first pass of each minute reads only the minutes it has not seen.

A minute is written once, whole, when it closes (``SET NX``, queues/history/recorder.py), and
never changes while its key lives: a minute found is final. So each queue keeps the window's
minutes found (their packed records) and the stalls of the rest of the last hour's minutes
found (from their summaries); a pass reads only the others: the minutes written since, and
those not written yet (the open one, or one whose jobs are still being read), read again until
they are. Nothing is kept of a window reaching back to minutes whose sketches may expire
meanwhile (MINUTE_SKETCH_TTL_S): those are read as before.

A queue's ``...:last`` unreadable, gone or moved back (Redis restarted, the queue's history
written again) drops what it kept. A process that takes the alert lease over starts with
nothing kept (:func:`forget`), so it reads as a process that just started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from queues.history.packed import PackedRecord
from queues.history.spans import Ask, read_totals_of
from queues.history.storage import MINUTE_MS, MINUTE_SKETCH_TTL_S
from queues.history.summary import Summary, read_summaries_of
from queues.reads.keys import QueueRef

# At most this many bytes kept (about: packed.py's estimate of a record, 64 bytes a stall
# count): some 11,000 minutes of widely spread durations (about 5.5 KB each; the same objects
# queues/history/packed.py keeps by their texts while it does). A queue that would go over
# keeps nothing and is read as before; the queues kept stay kept, so that passes over more
# queues than fit do not drop, each in turn, the ones the next pass reads.
LIMIT_BYTES = 64 * 1024 * 1024
# A minute's stall count kept: its dict entry and its int, about.
_STALL_BYTES = 64


# Each queue's window minutes found, by (tier, start), or the error its read met.
Records = dict[QueueRef, dict[Ask, PackedRecord] | BaseException]


def _record_bytes(record: PackedRecord) -> int:
    return (record.wait[1].bit_length() + record.run[1].bit_length()) // 8 + 400


@dataclass
class _Queue:
    last: int
    records: dict[int, PackedRecord] = field(default_factory=dict)  # window minutes found
    stalls: dict[int, int] = field(default_factory=dict)  # other minutes' stalls found
    used: int = 0

    def stalled(self, starts: Sequence[int]) -> tuple[int, list[int]]:
        """The stalls of the minutes of ``starts`` kept, and the minutes not kept."""
        count, unread = 0, []
        for start in starts:
            if (record := self.records.get(start)) is not None:
                count += record.counts[3]
            elif (stalls := self.stalls.get(start)) is not None:
                count += stalls
            else:
                unread.append(start)
        return count, unread

    def keep_stalls(self, found: Mapping[int, Summary]) -> None:
        for start, summary in found.items():
            self.stalls[start] = summary.counts[3]
            self.used += _STALL_BYTES

    def keep_records(self, found: Mapping[Ask, PackedRecord]) -> None:
        for (_, start), record in found.items():
            self.records[start] = record
            self.used += _record_bytes(record)


def usable(window_s: int) -> bool:
    """Whether minutes of a window this long can be kept: read again, they would still be
    there (their sketches outlive the window)."""
    return window_s * 1000 + 2 * MINUTE_MS <= MINUTE_SKETCH_TTL_S * 1000


class KeptMinutes:
    def __init__(self, limit: int = LIMIT_BYTES) -> None:
        self.limit = limit
        self.used = 0
        self._queues: dict[QueueRef, _Queue] = {}

    def __len__(self) -> int:
        return len(self._queues)

    def forget(self, ref: QueueRef | None = None) -> None:
        """Drops what one queue kept, or every queue's."""
        if ref is None:
            self._queues.clear()
            self.used = 0
        elif (dropped := self._queues.pop(ref, None)) is not None:
            self.used -= dropped.used

    def _queue(self, ref: QueueRef, last: int, oldest: int) -> _Queue:
        """The queue's minutes kept while ``last`` does not move back, those before ``oldest``
        dropped."""
        kept = self._queues.get(ref)
        if kept is not None and last < kept.last:
            self.forget(ref)
            kept = None
        if kept is None:
            kept = self._queues[ref] = _Queue(last)
        kept.last = last
        for start in [s for s in kept.records if s < oldest]:
            kept.used -= _record_bytes(kept.records.pop(start))
        for start in [s for s in kept.stalls if s < oldest]:
            del kept.stalls[start]
            kept.used -= _STALL_BYTES
        return kept

    def _recount(self, new: list[QueueRef]) -> None:
        """Over the limit: the queues ``new`` this pass are dropped, the last first, then every
        queue if that is not enough (those kept grew: a longer window)."""
        self.used = sum(queue.used for queue in self._queues.values())
        while self.used > self.limit and new:
            self.forget(new.pop())
        if self.used > self.limit:
            self.forget()

    async def read(
        self,
        lasts: Mapping[QueueRef, int | None],
        window: Mapping[QueueRef, Sequence[int]],
        hour: Mapping[QueueRef, Sequence[int]],
        keep: bool,
        now_ms: int,
    ) -> tuple[Records, dict[QueueRef, int | BaseException]]:
        """Each queue's window minutes found (packed records, by (tier, start)) and the stalls
        of its ``hour`` minutes added up, reading only what it did not keep (all, unless
        ``keep``). ``lasts``: each queue's ``...:last`` (None: unreadable or gone). A queue
        whose read failed gets the error."""
        for ref, last in lasts.items():
            if last is None or not keep:
                self.forget(ref)
        kept: dict[QueueRef, _Queue] = {}
        measured: dict[QueueRef, list[Ask]] = {}
        counted: dict[tuple[int, ...], list[QueueRef]] = {}
        stalled: dict[QueueRef, int] = {}
        new = [ref for ref in window if ref not in self._queues]
        for ref in window:
            last = lasts.get(ref)
            oldest = min((*window[ref][:1], *hour.get(ref, ())[:1]), default=now_ms)
            queue = kept[ref] = (
                self._queue(ref, last, oldest) if keep and last is not None else _Queue(0)
            )
            measured[ref] = [("m", s) for s in window[ref] if s not in queue.records]
            stalled[ref], unread = queue.stalled(hour.get(ref, ()))
            if unread:
                counted.setdefault(tuple(unread), []).append(ref)
        read, groups = await asyncio.gather(
            read_totals_of(measured, now_ms), _counted(counted, now_ms)
        )
        stalls: dict[QueueRef, int | BaseException] = dict(stalled)
        for group in groups:
            for ref, found in group.items():
                if isinstance(found, BaseException):
                    stalls[ref] = found
                    continue
                kept[ref].keep_stalls(found)
                stalls[ref] = stalled[ref] + sum(s.counts[3] for s in found.values())
        out: Records = {}
        for ref, wanted in window.items():
            queue, found_ref = kept[ref], read[ref]
            if isinstance(found_ref, BaseException):
                out[ref] = found_ref
                continue
            queue.keep_records(found_ref)
            out[ref] = {("m", s): queue.records[s] for s in wanted if s in queue.records}
        self._recount(new)
        return out, stalls


async def _counted(
    counted: Mapping[tuple[int, ...], list[QueueRef]], now_ms: int
) -> list[dict[QueueRef, dict[int, Summary] | BaseException]]:
    """Each group's minutes' summaries (their counts), the groups at the same time."""
    return list(
        await asyncio.gather(
            *(
                read_summaries_of(group, "m", list(starts), now_ms, names=False)
                for starts, group in counted.items()
            )
        )
    )


# The minutes this process keeps (the alert sender's passes and the pages' alert sections).
KEPT = KeptMinutes()


def forget() -> None:
    """Drops every kept minute: a process that takes the alert lease over starts cold."""
    KEPT.forget()
