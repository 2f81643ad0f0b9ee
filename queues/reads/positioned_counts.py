"""Exact counts read together with the position of the queue's event stream they include.

The live counts move with each event between exact reads. An exact read and the events the
reader takes meanwhile overlap: an event written just before the read is both in the counts and
still on its way to the reader, one written just after is in neither the counts nor (yet) the
estimate the read replaces. Reading each queue's counts and its stream's last id in one
MULTI/EXEC (BullMQ's scripts change a state and write its event atomically) says exactly which
events the counts hold: those up to that id are skipped, those after it are applied on top.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from queues.reads.counts import QueueSummary, _queue_request, _read_on, _summary
from queues.reads.keys import QueueRef
from queues.redis import fastpipe
from queues.redis.clients import get_client
from queues.redis.cluster import is_cluster
from queues.redis.errors import translate_redis_errors
from queues.redis.fastpipe import Command
from queues.redis.per_connection import by_connection


@dataclass(frozen=True)
class Positioned:
    summary: QueueSummary
    # The id of the last event the counts include ("0-0": no event yet); None when the read
    # could not be tied to the stream (a Redis Cluster, where the pipeline is not one MULTI).
    position: str | None


async def read_positioned(
    refs: list[QueueRef], legacy_paused: frozenset[QueueRef]
) -> list[Positioned]:
    """``refs``' summaries, each with the stream position it is exact at, in ``refs``' order."""
    if not refs:
        return []
    parts = await asyncio.gather(
        *(
            _read_on_connection(name, share, legacy_paused)
            for name, share in by_connection(refs).items()
        )
    )
    read = {item.summary.ref: item for part in parts for item in part}
    return [read[ref] for ref in refs]


async def _read_on_connection(
    connection: str, refs: list[QueueRef], legacy_paused: frozenset[QueueRef]
) -> list[Positioned]:
    client = get_client(connection)
    if is_cluster(client):
        return [
            Positioned(summary, None) for summary in await _read_on(connection, refs, legacy_paused)
        ]
    plan = [(ref, _queue_request(ref, ref in legacy_paused)) for ref in refs]
    commands: list[Command] = []
    for ref, request in plan:
        commands.append(("MULTI",))
        commands.extend(request.commands)
        commands.append(("XREVRANGE", ref.key("events"), "+", "-", "COUNT", "1"))
        commands.append(("EXEC",))
    async with translate_redis_errors():
        replies = await fastpipe.execute(client, commands)
    result: list[Positioned] = []
    position = 0
    for ref, request in plan:
        width = len(request.commands) + 3
        done = replies[position + width - 1]
        position += width
        if not isinstance(done, list):  # the transaction failed as a whole: report it per state
            done = [done] * (len(request.commands) + 1)
        summary = _summary(ref, request.answered, list(done[:-1]))
        result.append(Positioned(summary, _last_id(done[-1])))
    return result


def _last_id(reply: Any) -> str | None:
    if isinstance(reply, Exception):
        return None
    if not reply:
        return "0-0"
    stream_id = reply[0][0]
    return stream_id.decode() if isinstance(stream_id, bytes) else str(stream_id)
