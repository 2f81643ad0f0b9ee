"""Recording history from the live reader's events (queues/live/follower.py feeds it).

Each completed, failed, retried or stalled event is noted; every flush reads the noted jobs'
few timestamp fields in one pipelined round trip (never one per event), adds each job to its
minute in memory, and writes every closed minute once, whole (storage.py). A finished job is
added once per (job id, finish time) whoever notes it, its event or the back-fill of a reader
that starts (backfill.py); a minute that another reader wrote first is left as it wrote it.

A job whose finish time falls in a minute already closed here (a worker's clock far behind) is
added to the open minute instead: counted, a little late, never lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Iterable

import redis.asyncio as aioredis

from queues.history import backfill, prom
from queues.history.measure import FIELDS, UNKNOWN_NAME, Noted, Outcome, kind_of, outcome
from queues.history.record import NameRecord, Span, dumps_span
from queues.history.rollup import Rollups
from queues.history.storage import (
    FOLDED_NAME,
    MINUTE_MS,
    MINUTE_SKETCH_TTL_S,
    MINUTE_TTL_S,
    NAME_CAP,
    NAMES_TTL_S,
    last_key,
    names_key,
    span_key,
    summary_key,
)
from queues.history.summary import dumps_summary
from queues.live.events import QueueEvent
from queues.reads.keys import QueueRef
from queues.redis import fastpipe

log = logging.getLogger("bullpen.history")

# A minute is written this long after it ends: events of its last moments are still read.
GRACE_MS = 5_000
# Job hashes read in one round trip at most, and in one flush (a reader that starts reads
# everything it back-fills at once; after that, a burst is read over a few flushes, so that
# the live updates sharing the reader's loop keep flowing).
READ_BATCH = 5_000
READ_PER_FLUSH = 20_000
# Queues back-filled in one flush at most: 50,000 at once took the loop 11 s of packing alone,
# while the live updates and the lease wait on it. Minutes are written once every followed
# queue is back-filled, as they were when all were back-filled at once.
BACKFILL_BATCH = 2_000
# Closed minutes encoded between two turns of the loop when they are written.
ENCODE_SLICE = 10


class HistoryRecorder:
    def __init__(self) -> None:
        self.noted: list[tuple[QueueRef, Noted]] = []
        self.open: dict[QueueRef, dict[int, Span]] = {}
        self.seen: dict[QueueRef, dict[int, set[str]]] = {}
        self.names: dict[QueueRef, set[str]] = {}
        self.new_names: dict[QueueRef, set[str]] = {}
        self.backfilled: set[QueueRef] = set()
        self.rollups = Rollups()
        # Figures for the bench and the logs: events noted, jobs read, spans written,
        # durations dropped as negative.
        self.stats: Counter[str] = Counter()

    # ---- from the reader ------------------------------------------------------------------

    def take(self, ref: QueueRef, event: QueueEvent) -> None:
        kind = kind_of(event.event, event.fields)
        if kind is None or not event.job_id:
            return
        self.noted.append((ref, Noted(kind, event.job_id, event.at_ms)))
        self.stats["events"] += 1

    def restart(self) -> None:
        """The streams are read again from their ends: what came meanwhile is back-filled."""
        self.backfilled.clear()

    def forget(self) -> None:
        """Another reader holds the lease now: the minutes open here are incomplete, and its
        to write."""
        self.noted.clear()
        self.open.clear()
        self.seen.clear()
        self.backfilled.clear()

    # ---- flushing ---------------------------------------------------------------------------

    async def flush(self, redis: aioredis.Redis, followed: Iterable[QueueRef], now_ms: int) -> None:
        """Back-fill newly followed queues, read what was noted, write the closed minutes and
        roll up closed hours and days."""
        fresh = [ref for ref in followed if ref not in self.backfilled]
        if fresh:
            batch = fresh[:BACKFILL_BATCH]
            found = await backfill.gather(redis, batch, now_ms)
            self.backfilled.update(batch)
            self.noted.extend(found.noted)
            self.rollups.note_active(found.last_written)
            await self._read_noted(redis, now_ms)
            self._add_counts_only(found.counts_only, now_ms)
            if len(fresh) > len(batch):
                return  # the others' back-fill first
        else:
            await self._read_noted(redis, now_ms, limit=READ_PER_FLUSH)
        if self.noted:
            return  # a minute is written only once every job noted for it was read
        await self._write_closed(redis, now_ms)
        await self.rollups.run(redis, now_ms)

    async def _read_noted(
        self, redis: aioredis.Redis, now_ms: int, limit: int | None = None
    ) -> None:
        read = 0
        while self.noted and (limit is None or read < limit):
            batch = self.noted[:READ_BATCH]
            unknown = sorted({ref for ref, _ in batch if ref not in self.names})
            commands: list[fastpipe.Command] = [("SMEMBERS", names_key(ref)) for ref in unknown]
            commands += [("HMGET", ref.job_key(noted.job_id), *FIELDS) for ref, noted in batch]
            replies = await fastpipe.execute(redis, commands)
            # Taken off only once read: a batch Redis did not answer is read again next time.
            del self.noted[: len(batch)]
            read += len(batch)
            for ref, reply in zip(unknown, replies, strict=False):
                self.names[ref] = set(reply) if isinstance(reply, (set, list)) else set()
            self.stats["reads"] += len(batch)
            for (ref, noted), values in zip(batch, replies[len(unknown) :], strict=True):
                found = outcome(noted, values if isinstance(values, list) else [])
                if found is not None:
                    self._add(ref, found, backfilled=noted.finished_on is not None, now_ms=now_ms)

    def _minute(self, at_ms: int, backfilled: bool, now_ms: int) -> int:
        minute = at_ms - at_ms % MINUTE_MS
        if backfilled or not _closed(minute, now_ms):
            return minute
        return now_ms - now_ms % MINUTE_MS

    def _add(self, ref: QueueRef, found: Outcome, *, backfilled: bool, now_ms: int) -> None:
        minute = self._minute(found.at_ms, backfilled, now_ms)
        if found.kind in ("completed", "failed"):
            seen = self.seen.setdefault(ref, {}).setdefault(
                found.at_ms - found.at_ms % MINUTE_MS, set()
            )
            if found.dedup_key in seen:
                return
            seen.add(found.dedup_key)
        record = self._record(ref, minute, found.name)
        self.stats["negative"] += found.negative
        if found.kind == "completed":
            record.completed += 1
        elif found.kind == "failed":
            record.failed += 1
        elif found.kind == "retried":
            record.retried += 1
        else:
            record.stalled += 1
            return
        if found.kind == "retried":
            return
        record.negative += found.negative
        record.unmeasured += int(found.unmeasured)
        if found.wait_ms is not None:
            record.wait.add(found.wait_ms)
        if found.run_ms is not None:
            record.run.add(found.run_ms)
            record.keep_slowest([(found.job_id, float(found.run_ms))])

    def _add_counts_only(
        self, counts: dict[QueueRef, dict[int, tuple[int, int]]], now_ms: int
    ) -> None:
        """Jobs BullMQ's metrics counted in minutes being back-filled beyond the jobs it still
        keeps: counted, not measured, under no name."""
        for ref, minutes in counts.items():
            for minute, (completed, failed) in minutes.items():
                span = self.open.get(ref, {}).get(minute, {})
                kept_completed = sum(record.completed for record in span.values())
                kept_failed = sum(record.failed for record in span.values())
                extra_completed = completed - kept_completed
                extra_failed = failed - kept_failed
                if extra_completed <= 0 and extra_failed <= 0:
                    continue
                record = self._record(ref, minute, UNKNOWN_NAME)
                record.completed += max(0, extra_completed)
                record.failed += max(0, extra_failed)
                record.unmeasured += max(0, extra_completed) + max(0, extra_failed)

    def _record(self, ref: QueueRef, minute: int, name: str) -> NameRecord:
        name = self._capped(ref, name)
        span = self.open.setdefault(ref, {}).setdefault(minute, {})
        record = span.get(name)
        if record is None:
            record = span[name] = NameRecord()
        return record

    def _capped(self, ref: QueueRef, name: str) -> str:
        known = self.names.setdefault(ref, set())
        if name in known:
            return name
        if len(known) >= NAME_CAP:
            return FOLDED_NAME
        known.add(name)
        self.new_names.setdefault(ref, set()).add(name)
        return name

    async def _write_closed(self, redis: aioredis.Redis, now_ms: int) -> None:
        closed: list[tuple[QueueRef, int, Span]] = [
            (ref, minute, minutes[minute])
            for ref, minutes in self.open.items()
            for minute in sorted(minutes)
            if _closed(minute, now_ms)
        ]
        if not closed and not self.new_names:
            return
        # Encoded a few queues at a time, the loop let go between: the pages this process
        # serves wait a few ms, not the whole minute's encoding (about 0.7 ms a queue).
        texts: list[tuple[str, str]] = []
        for index, (_, _, span) in enumerate(closed):
            if index and index % ENCODE_SLICE == 0:
                await asyncio.sleep(0)
            texts.append((dumps_span(span), dumps_summary(span)))
        async with redis.pipeline(transaction=False) as pipe:
            for ref, names in self.new_names.items():
                pipe.sadd(names_key(ref), *sorted(names))
                pipe.expire(names_key(ref), NAMES_TTL_S)
            newest: dict[QueueRef, int] = {}
            first = len(pipe.command_stack)
            for (ref, minute, _), (sketches, summary) in zip(closed, texts, strict=True):
                pipe.set(span_key(ref, "m", minute), sketches, nx=True, ex=MINUTE_SKETCH_TTL_S)
                pipe.set(summary_key(ref, "m", minute), summary, nx=True, ex=MINUTE_TTL_S)
                newest[ref] = max(minute, newest.get(ref, minute))
            for ref, minute in newest.items():
                pipe.set(last_key(ref), minute, ex=MINUTE_TTL_S)
            replies = await pipe.execute()
        # Dropped only once written: minutes Redis did not take are written next time.
        for ref, minute, _ in closed:
            self.open[ref].pop(minute, None)
        self.new_names.clear()
        # Minutes this reader wrote (not one another wrote first) go to the metrics' counters.
        # (Each minute is two SETs, its sketches' first: whose reply says who wrote it.)
        won = [item for item, reply in zip(closed, replies[first::2], strict=False) if reply]
        if won:
            async with redis.pipeline(transaction=False) as pipe:
                for ref, _, span in won:
                    prom.add_to_pipeline(pipe, ref, span)
                await pipe.execute()
        self.stats["spans"] += len(won)
        self.rollups.note_active({ref: minute for ref, minute in newest.items()})
        for ref, minute, _ in closed:
            self.seen.get(ref, {}).pop(minute, None)
        # Minutes closed long ago keep no dedup entries (back-filled jobs of old minutes).
        for ref_seen in self.seen.values():
            for minute in [m for m in ref_seen if m < now_ms - 2 * 3_600_000]:
                del ref_seen[minute]


def _closed(minute: int, now_ms: int) -> bool:
    return minute + MINUTE_MS + GRACE_MS <= now_ms
