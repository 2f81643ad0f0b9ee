"""Queues the live reader has seen created, for every process until discovery's next scan.

Discovery keeps its scan of the keyspace for ``DISCOVERY_INTERVAL`` seconds (30 by default);
the live reader notices a new queue within a second or two (new_queues.py). What it notices is
written to one sorted set per connection in Redis (member: the queue's prefix and name, score:
when it was seen, in ms), so that every server process lists the queue at once, not only the
one holding the lease. Entries older than ``KEEP_MS`` are dropped: by then a scan lists them.
Queues it finds obliterated are written to a second set alike, so that every process stops
listing them at once.
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


def gone_key(connection: str) -> str:
    return f"{own_key_prefix(connection)}:live:gone-queues"


def _member(ref: QueueRef) -> str:
    return json.dumps([ref.prefix, ref.name])


def now_ms() -> int:
    return int(time.time() * 1000)


async def note(
    redis: aioredis.Redis, connection: str, refs: list[QueueRef], *, gone: bool = False
) -> None:
    """``refs`` were seen created now (``gone``: seen obliterated). Raises what Redis raises
    (a refused write included)."""
    if not refs:
        return
    at = now_ms()
    key = gone_key(connection) if gone else seen_key(connection)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.zadd(key, {_member(ref): at for ref in refs})
        pipe.zremrangebyscore(key, "-inf", at - KEEP_MS)
        await pipe.execute()


async def seen_since(
    redis: aioredis.Redis, connection: str, since_ms: int
) -> tuple[dict[QueueRef, int], dict[QueueRef, int]]:
    """The queues seen created after ``since_ms``, and those seen obliterated, with when
    (ms): one round trip."""
    async with redis.pipeline(transaction=False) as pipe:
        for key in (seen_key(connection), gone_key(connection)):
            pipe.zrangebyscore(key, f"({since_ms}", "+inf", start=0, num=10_000, withscores=True)
        created, gone = await pipe.execute()
    return _refs(created, connection), _refs(gone, connection)


def _refs(found: Any, connection: str) -> dict[QueueRef, int]:
    refs: dict[QueueRef, int] = {}
    for member, score in found:
        try:
            prefix, name = json.loads(member)
            refs[QueueRef(str(prefix), str(name), connection)] = int(score)
        except (ValueError, TypeError):
            continue  # not written by note(): ignored
    return refs
