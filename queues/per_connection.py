"""Reads over queues of several connections: each connection's share in one pipelined round
trip on its own client, the shares at the same time, the replies in the order asked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from queues import fastpipe
from queues.connection import get_client
from queues.fastpipe import Command
from queues.keys import QueueRef

T = TypeVar("T")


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
    first = connections[0]
    if all(name == first for name in connections):
        return await fastpipe.execute(get_client(first), commands, packed)
    shares: dict[str, list[int]] = {}
    for index, name in enumerate(connections):
        shares.setdefault(name, []).append(index)
    answers = await asyncio.gather(
        *(
            fastpipe.execute(get_client(name), [commands[i] for i in indexes])
            for name, indexes in shares.items()
        )
    )
    replies: list[Any] = [None] * len(commands)
    for indexes, answer in zip(shares.values(), answers, strict=True):
        for index, reply in zip(indexes, answer, strict=True):
            replies[index] = reply
    return replies


async def execute_for(refs: Sequence[QueueRef], commands: Sequence[Command]) -> list[Any]:
    """:func:`execute` of ``commands``, ``refs[i]`` the queue ``commands[i]`` reads."""
    return await execute([ref.connection for ref in refs], commands)
