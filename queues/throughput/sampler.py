"""Bullpen's own throughput samples, for queues whose workers do not write BullMQ's metrics.

The live follower counts completed and failed events per queue and minute; each closed minute
is pushed to ``<LIVE_KEY_PREFIX>:stats:<prefix>:<queue>`` as ``[minute ms, completed, failed]``
and the list is trimmed to one day (1,440 minutes): bounded in size whatever the traffic.
"""

from __future__ import annotations

import json

import redis.asyncio as aioredis

from queues.reads.keys import QueueRef
from queues.redis.connections import own_key_prefix

MINUTE_MS = 60_000
KEEP_MINUTES = 1440
GRACE_MS = 2_000  # events of a minute may arrive a little after it ends


def stats_key(ref: QueueRef) -> str:
    return f"{own_key_prefix(ref.connection)}:stats:{ref.qualified_name}"


class MinuteSampler:
    def __init__(self) -> None:
        # queue → {minute start ms: [completed, failed]}
        self.open: dict[QueueRef, dict[int, list[int]]] = {}

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
        if not done:
            return 0
        async with redis.pipeline(transaction=False) as pipe:
            for ref, minute, completed, failed in done:
                key = stats_key(ref)
                pipe.lpush(key, json.dumps([minute, completed, failed]))
                pipe.ltrim(key, 0, KEEP_MINUTES - 1)
            await pipe.execute()
        return len(done)
