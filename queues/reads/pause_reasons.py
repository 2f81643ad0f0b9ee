"""Why a queue was paused, as the person who paused it from the dashboard said.

BullMQ has no place for it, and Bullpen never writes into BullMQ's keys: the reason lives under
Bullpen's own key prefix, one string per queue, written by the pause action and removed by
resume. It is shown only while the queue's meta hash says it is paused, so a queue resumed by
something else (a Node service) shows none. A Postgres store's queues keep theirs with
Bullpen's other state, in the state Redis, under a key naming the store.
"""

from __future__ import annotations

from collections import defaultdict

from queues.reads.keys import QueueRef
from queues.reads.store import on_redis
from queues.redis.clients import get_client
from queues.redis.connections import own_key_prefix, state_name
from queues.redis.errors import translate_redis_errors

MAX_REASON = 500  # characters


def _kept_on(ref: QueueRef) -> str:
    """The Redis connection keeping ``ref``'s reason: its own, or the state connection."""
    return ref.connection if on_redis([ref]) else state_name()


def reason_key(ref: QueueRef) -> str:
    if on_redis([ref]):
        return f"{own_key_prefix(ref.connection)}:pause-reason:{ref.qualified_name}"
    return f"{own_key_prefix(state_name())}:pause-reason:store:{ref.connection}:{ref.name}"


async def write_reason(ref: QueueRef, reason: str) -> None:
    """Keep ``reason`` (an empty one removes the last)."""
    client = get_client(_kept_on(ref))
    async with translate_redis_errors():
        if reason:
            await client.set(reason_key(ref), reason[:MAX_REASON])
        else:
            await client.delete(reason_key(ref))


async def pause_reasons(refs: list[QueueRef]) -> dict[QueueRef, str]:
    """The reasons kept for ``refs`` (one round trip per connection); queues without one are
    left out."""
    per_connection: dict[str, list[QueueRef]] = defaultdict(list)
    for ref in refs:
        per_connection[_kept_on(ref)].append(ref)
    found: dict[QueueRef, str] = {}
    async with translate_redis_errors():
        for connection, mine in per_connection.items():
            async with get_client(connection).pipeline(transaction=False) as pipe:
                for ref in mine:
                    pipe.get(reason_key(ref))
                replies = await pipe.execute(raise_on_error=False)
            for ref, reply in zip(mine, replies, strict=True):
                if isinstance(reply, str) and reply:
                    found[ref] = reply
    return found
