"""Reads over queues of several connections: each connection's share in one pipelined round
trip on its own client, the shares at the same time, the replies in the order asked.

A read over several connections goes on without one that cannot be reached: its replies are
the error (as an error reply would be), and queues/redis/reachability.py is told. A read that needs
one connection only fails with it, as it always did.

Commands for a queue on a store other than Redis (BullMQ 6 on PostgreSQL) are not sent: the
keys Bullpen reads beside a queue (metrics, events, locks) exist on Redis only, and read as
absent there (a None reply)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any, cast

from queues.errors import RedisUnavailable
from queues.reads.keys import QueueRef
from queues.redis import connections as stores
from queues.redis import fastpipe, reachability
from queues.redis.clients import get_client
from queues.redis.errors import reason
from queues.redis.fastpipe import Command
from queues.redis.unreachable import UNREACHABLE


def by_connection(refs: Iterable[QueueRef]) -> dict[str, list[QueueRef]]:
    """``refs`` split by connection, each share in the order given."""
    shares: dict[str, list[QueueRef]] = {}
    for ref in refs:
        shares.setdefault(ref.connection, []).append(ref)
    return shares


async def execute(
    connections: Sequence[str], commands: Sequence[Command], packed: bytes | None = None
) -> list[Any]:
    """The replies to ``commands``, ``connections[i]`` naming where ``commands[i]`` goes.
    ``packed``: the commands' RESP, used when they all go to one connection."""
    if not commands:
        return []
    other = stores.postgres_set()
    if other and not other.isdisjoint(connections):
        return await _on_redis_only(connections, commands)
    first = connections[0]
    if all(name == first for name in connections):
        return await fastpipe.execute(get_client(first), commands, packed)
    shares: dict[str, list[int]] = {}
    for index, name in enumerate(connections):
        shares.setdefault(name, []).append(index)
    answers = await asyncio.gather(
        *(_share(name, [commands[i] for i in indexes]) for name, indexes in shares.items())
    )
    if all(isinstance(answer, BaseException) for answer in answers):
        raise cast(BaseException, answers[0])
    replies: list[Any] = [None] * len(commands)
    for indexes, answer in zip(shares.values(), answers, strict=True):
        for position, index in enumerate(indexes):
            replies[index] = answer if isinstance(answer, BaseException) else answer[position]
    return replies


async def _on_redis_only(connections: Sequence[str], commands: Sequence[Command]) -> list[Any]:
    kept = [index for index, name in enumerate(connections) if not stores.is_postgres(name)]
    replies: list[Any] = [None] * len(commands)
    if kept:
        found = await execute([connections[i] for i in kept], [commands[i] for i in kept])
        for index, reply in zip(kept, found, strict=True):
            replies[index] = reply
    return replies


async def _share(name: str, commands: list[Command]) -> list[Any] | BaseException:
    """One connection's replies, or why it could not be read."""
    if reachability.skip(name):
        return RedisUnavailable(f"Redis connection {name!r} is unreachable")
    try:
        found = await fastpipe.execute(get_client(name), commands)
    except UNREACHABLE as error:
        reachability.note_down(name, reason(error))
        return error
    reachability.note_up(name)
    return found


async def execute_for(refs: Sequence[QueueRef], commands: Sequence[Command]) -> list[Any]:
    """:func:`execute` of ``commands``, ``refs[i]`` the queue ``commands[i]`` reads."""
    return await execute([ref.connection for ref in refs], commands)
