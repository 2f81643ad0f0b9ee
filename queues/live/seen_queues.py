"""Queues the live reader has seen created, for every process until discovery's next scan.

Discovery keeps its scan of the keyspace for ``DISCOVERY_INTERVAL`` seconds (30 by default);
the live reader notices a new queue within a second or two (new_queues.py). What it notices is
written to one sorted set per connection in Redis (member: the queue's prefix and name, score:
when it was seen, in ms), so that every server process lists the queue at once, not only the
one holding the lease. Entries older than ``KEEP_MS`` are dropped: by then a scan lists them.
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis.asyncio as aioredis

from queues.reads.keys import QueueRef
from queues.redis.connections import own_key_prefix

# Longer than any sensible DISCOVERY_INTERVAL: a scan has listed the queue by then.
KEEP_MS = 10 * 60 * 1000


def seen_key(connection: str) -> str:
    return f"{own_key_prefix(connection)}:live:new-queues"


def _member(ref: QueueRef) -> str:
    return json.dumps([ref.prefix, ref.name])


def now_ms() -> int:
    return int(time.time() * 1000)


async def note(redis: aioredis.Redis, connection: str, refs: list[QueueRef]) -> None:
    """``refs`` were seen created now. Raises what Redis raises (a refused write included)."""
    if not refs:
        return
    at = now_ms()
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zadd(seen_key(connection), {_member(ref): at for ref in refs})
        pipe.zremrangebyscore(seen_key(connection), "-inf", at - KEEP_MS)
        await pipe.execute()


async def seen_since(redis: aioredis.Redis, connection: str, since_ms: int) -> dict[QueueRef, int]:
    """The queues seen created after ``since_ms``, with when (ms)."""
    found: Any = await redis.zrangebyscore(
        seen_key(connection), f"({since_ms}", "+inf", start=0, num=10_000, withscores=True
    )
    refs: dict[QueueRef, int] = {}
    for member, score in found:
        try:
            prefix, name = json.loads(member)
            refs[QueueRef(str(prefix), str(name), connection)] = int(score)
        except (ValueError, TypeError):
            continue  # not written by note(): ignored
    return refs
