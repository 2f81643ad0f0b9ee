"""Rolling closed hours up from their minutes, and closed days from their hours, exactly
(counts add, sketches merge), each written once (``SET NX``, its sketches and its summary) a
little after it closes.

A roll-up lost (the reader stopped, Redis restarted in the middle) costs nothing: reads make a
missing hour from its minutes and a missing day from its hours (spans.py), and the next
reader rolls them up from the same sketches, which are kept longer than they take to roll up.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis

from queues.history.record import dumps_span, dumps_total
from queues.history.spans import mget, read_spans
from queues.history.storage import (
    DAY_MS,
    HOUR_MS,
    SKETCH_KEPT_MS,
    SKETCH_TTL_S,
    TIERS,
    span_key,
    summary_key,
    total_key,
)
from queues.history.summary import dumps_summary
from queues.reads.keys import QueueRef

# A span is rolled up this long after it ends: its last minutes are written by then.
ROLL_AFTER_MS = 120_000
# How often the reader looks for spans to roll up.
EVERY_MS = 60_000
# Seconds one call walks queues at most (a round trip or two each): a walk of 50,000 queues
# goes on over the live reader's passes after it, which must end soon enough to renew its lease.
WALK_S = 0.2


class Rollups:
    def __init__(self) -> None:
        # Queues recorded lately, with the newest minute written.
        self.active: dict[QueueRef, int] = {}
        self.done: dict[QueueRef, set[tuple[str, int]]] = {}
        self.next_at = 0
        self.walk: list[QueueRef] = []  # the queues the walk under way has still to look at

    def note_active(self, newest: dict[QueueRef, int]) -> None:
        for ref, minute in newest.items():
            self.active[ref] = max(minute, self.active.get(ref, minute))

    async def run(self, redis: aioredis.Redis, now_ms: int, *, force: bool = False) -> int:
        """Roll up what is due, for ``WALK_S`` at most (all of it with ``force``); the number of
        spans written."""
        if not self.walk or force:
            if now_ms < self.next_at and not force:
                return 0
            self.next_at = now_ms + EVERY_MS
            self.walk = list(self.active)
        written = 0
        until = time.monotonic() + WALK_S
        while self.walk and (force or time.monotonic() < until):
            ref = self.walk.pop()
            newest = self.active.get(ref)
            if newest is None:
                continue
            if newest < now_ms - 2 * DAY_MS:
                del self.active[ref]
                self.done.pop(ref, None)
                continue
            done = self.done.setdefault(ref, set())
            # Hours while their minutes are kept, days while their hours are (a day after).
            for tier, size, back in (
                ("h", HOUR_MS, SKETCH_KEPT_MS["m"]),
                ("d", DAY_MS, 2 * DAY_MS),
            ):
                first = now_ms - back
                first -= first % size
                due = [
                    start
                    for start in range(first, newest + 1, size)
                    if start + size + ROLL_AFTER_MS <= now_ms and (tier, start) not in done
                ]
                written += await _roll(redis, ref, tier, due, now_ms)
                done.update((tier, start) for start in due)
            for entry in [e for e in done if e[1] < now_ms - 3 * DAY_MS]:
                done.discard(entry)
        return written


async def _roll(
    redis: aioredis.Redis, ref: QueueRef, tier: str, starts: list[int], now_ms: int
) -> int:
    if not starts:
        return 0
    raws = await mget(ref, [summary_key(ref, tier, start) for start in starts])
    missing = [start for start, raw in zip(starts, raws, strict=True) if raw is None]
    if not missing:
        return 0
    filled = await read_spans(ref, tier, missing, now_ms)
    ready = [(start, span) for start, span in filled.items() if span]
    if not ready:
        return 0
    async with redis.pipeline(transaction=False) as pipe:
        for start, span in ready:
            pipe.set(span_key(ref, tier, start), dumps_span(span), nx=True, ex=SKETCH_TTL_S[tier])
            pipe.set(summary_key(ref, tier, start), dumps_summary(span), nx=True, ex=TIERS[tier][1])
            # The queue's record alone, what a range's totals read (storage.ALONE).
            total = dumps_total(span)
            pipe.set(total_key(ref, tier, start), total, nx=True, ex=SKETCH_TTL_S[tier])
        await pipe.execute()
    return len(ready)
