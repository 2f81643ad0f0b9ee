"""Stuck jobs: active jobs whose lock is gone (their worker died and no stalled check ran yet).

A worker holds a lock (``<prefix>:<queue>:<id>:lock``) on each job it runs and renews it; once
the lock has expired, no worker will finish the job until a live worker's stalled check moves
it back to wait. Until then it sits in ``active`` for good: stuck.
"""

from __future__ import annotations

from collections.abc import Iterable

from redis.asyncio import Redis

from queues.reads.keys import QueueRef
from queues.reads.scripts import is_noscript, script
from queues.reads.store import on_redis
from queues.redis import fastpipe
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors
from queues.redis.fastpipe import Command

# The overview looks at this many of each queue's active jobs (the oldest, the likeliest to be
# stuck): a queue with 100,000 active jobs costs Redis a bounded read, not a walk of them all.
STUCK_SCAN_LIMIT = 1000


def lock_key(ref: QueueRef, job_id: str) -> str:
    return f"{ref.job_key(job_id)}:lock"


def lock_exists(ref: QueueRef, job_id: str) -> Command:
    """The command whose reply (1 or 0) says whether a worker holds the job: sent in the same
    round trip as the job's own read."""
    return ("EXISTS", lock_key(ref, job_id))


def is_stuck(state: str, lock_reply: object) -> bool:
    """Whether a job in ``state`` whose lock read answered ``lock_reply`` is stuck. A reply
    that is an error says nothing: such a job is not flagged."""
    return state == "active" and lock_reply == 0


async def stuck_counts(
    refs: Iterable[QueueRef], client: Redis | None = None
) -> dict[QueueRef, int]:
    """How many of each queue's active jobs (the oldest STUCK_SCAN_LIMIT) have no lock: one
    round trip per connection. Queues whose read failed are left out. ``client``: the one to
    read all of them with (the live reader's, which fails at once when Redis is away)."""
    by_connection: dict[str, list[QueueRef]] = {}
    for ref in on_redis(refs):  # a lock is a Redis key: other stores are not counted here
        by_connection.setdefault(ref.connection, []).append(ref)
    found: dict[QueueRef, int] = {}
    async with translate_redis_errors():
        for connection, members in by_connection.items():
            redis = client or get_client(connection)
            counter = script(redis, "count_stuck")
            commands: list[Command] = [
                ("EVALSHA", counter.sha, 1, ref.key("active"), ref.key(""), STUCK_SCAN_LIMIT)
                for ref in members
            ]
            replies = await fastpipe.execute(redis, commands)
            if any(is_noscript(reply) for reply in replies):
                await redis.script_load(counter.script)
                replies = await fastpipe.execute(redis, commands)
            for ref, reply in zip(members, replies, strict=True):
                if isinstance(reply, int):
                    found[ref] = reply
    return found
