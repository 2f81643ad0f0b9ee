"""Bullpen's own throughput samples, for queues whose workers do not write BullMQ's metrics.

The live follower counts completed and failed events per queue and minute; each closed minute
is pushed to ``<LIVE_KEY_PREFIX>:stats:<prefix>:<queue>`` as ``[minute ms, completed, failed]``
and the list is trimmed to one day (1,440 minutes): bounded in size whatever the traffic. Each
flush also says how far the counting reached (coverage.py): minutes before it are unknown.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import redis.asyncio as aioredis

from queues.reads.keys import QueueRef
from queues.redis.connections import own_key_prefix
from queues.throughput.coverage import GRACE_MS, KEEP_MS, sampled_key, stretches
from queues.throughput.coverage import MINUTE_MS as MINUTE_MS  # where the others import it

KEEP_MINUTES = 1440
# Flushes come every few seconds while the reader counts; none for this long (an idle spell,
# a stalled loop) and the next one starts a new stretch: what came meanwhile may be uncounted.
BROKEN_AFTER_MS = 60_000


def stats_key(ref: QueueRef) -> str:
    return f"{own_key_prefix(ref.connection)}:stats:{ref.qualified_name}"


class MinuteSampler:
    def __init__(
        self, following: Callable[[], bool] = lambda: True, connection: str | None = None
    ) -> None:
        """``following``: whether the reader follows any stream now (no stretch starts before
        it does); ``connection``: the Redis whose streams it counts (None: the default one)."""
        # queue → {minute start ms: [completed, failed]}
        self.open: dict[QueueRef, dict[int, list[int]]] = {}
        self.following = following
        self.connection = connection
        self.since: int | None = None  # where this stretch of counting started (ms)
        self.flushed = 0  # when the last flush was (ms)

    def restart(self) -> None:
        """The streams are followed afresh from their ends: what came meanwhile went
        uncounted, so the next flush starts a new stretch."""
        self.since = None

    def add(self, ref: QueueRef, event: str, at_ms: int) -> None:
        if event not in ("completed", "failed") or at_ms <= 0:
            return
        minute = at_ms - at_ms % MINUTE_MS
        counts = self.open.setdefault(ref, {}).setdefault(minute, [0, 0])
        counts[0 if event == "completed" else 1] += 1

    def closed(self, now_ms: int) -> list[tuple[QueueRef, int, int, int]]:
        done = []
        for ref, minutes in self.open.items():
            for minute in sorted(minutes):
                if minute + MINUTE_MS + GRACE_MS <= now_ms:
                    completed, failed = minutes.pop(minute)
                    done.append((ref, minute, completed, failed))
        return done

    async def flush(self, redis: aioredis.Redis, now_ms: int) -> int:
        done = self.closed(now_ms)
        if now_ms - self.flushed > BROKEN_AFTER_MS:
            self.since = None
        self.flushed = now_ms
        started = self.since is None and self.following()
        if started:
            self.since = now_ms
        async with redis.pipeline(transaction=False) as pipe:
            for ref, minute, completed, failed in done:
                key = stats_key(ref)
                pipe.lpush(key, json.dumps([minute, completed, failed]))
                pipe.ltrim(key, 0, KEEP_MINUTES - 1)
            if self.since is not None:
                # Written with the minutes it vouches for: none is counted before it is pushed.
                covered = sampled_key(self.connection)
                pipe.hset(covered, str(self.since), str(now_ms))
                pipe.pexpire(covered, KEEP_MS)
            if started:
                pipe.hgetall(sampled_key(self.connection))
            replies = await pipe.execute()
        if started:
            await self._drop_old(redis, replies[-1], now_ms)
        return len(done)

    async def _drop_old(self, redis: aioredis.Redis, reply: object, now_ms: int) -> None:
        """Stretches that ended more than a day ago: once a stretch, the hash stays small."""
        old = [str(start) for start, through in stretches(reply) if through < now_ms - KEEP_MS]
        if old:
            await redis.hdel(sampled_key(self.connection), *old)
