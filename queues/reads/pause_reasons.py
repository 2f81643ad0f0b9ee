"""Why a queue was paused, as the person who paused it from the dashboard said.

BullMQ has no place for it, and Bullpen never writes into BullMQ's keys: the reason lives under
Bullpen's own key prefix, one string per queue, written by the pause action and removed by
resume. It is shown only while the queue's meta hash says it is paused, so a queue resumed by
something else (a Node service) shows none. A Postgres store's queues keep theirs in the Django
database (queues/models.py), which every deployment has, with or without a Redis.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Q

from queues.reads.keys import QueueRef
from queues.reads.store import on_redis
from queues.redis.clients import get_client
from queues.redis.connections import own_key_prefix
from queues.redis.errors import translate_redis_errors

MAX_REASON = 500  # characters


def reason_key(ref: QueueRef) -> str:
    """The key of a Redis queue's reason, in its own Redis."""
    return f"{own_key_prefix(ref.connection)}:pause-reason:{ref.qualified_name}"


async def write_reason(ref: QueueRef, reason: str) -> None:
    """Keep ``reason`` (an empty one removes the last)."""
    if not on_redis([ref]):
        from queues.models import StorePauseReason  # a model: loaded once the apps are

        kept = StorePauseReason.objects.filter(connection=ref.connection, queue=ref.name)
        if reason:
            await StorePauseReason.objects.aupdate_or_create(
                connection=ref.connection, queue=ref.name, defaults={"reason": reason[:MAX_REASON]}
            )
        else:
            await kept.adelete()
        return
    client = get_client(ref.connection)
    async with translate_redis_errors():
        if reason:
            await client.set(reason_key(ref), reason[:MAX_REASON])
        else:
            await client.delete(reason_key(ref))


async def pause_reasons(refs: list[QueueRef]) -> dict[QueueRef, str]:
    """The reasons kept for ``refs`` (one round trip per connection, one query for every
    store's); queues without one are left out."""
    per_connection: dict[str, list[QueueRef]] = defaultdict(list)
    on_stores: list[QueueRef] = []
    for ref in refs:
        if on_redis([ref]):
            per_connection[ref.connection].append(ref)
        else:
            on_stores.append(ref)
    found = await _store_reasons(on_stores) if on_stores else {}
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


async def _store_reasons(refs: list[QueueRef]) -> dict[QueueRef, str]:
    from queues.models import StorePauseReason

    wanted = {(ref.connection, ref.name): ref for ref in refs}
    match = Q()
    for connection, name in wanted:
        match |= Q(connection=connection, queue=name)
    found: dict[QueueRef, str] = {}
    async for kept in StorePauseReason.objects.filter(match).values_list(
        "connection", "queue", "reason"
    ):
        ref = wanted.get((kept[0], kept[1]))
        if ref is not None and kept[2]:
            found[ref] = kept[2]
    return found
