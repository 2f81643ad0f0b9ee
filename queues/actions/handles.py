"""bullmq ``Queue`` objects for the running event loop, on a client of their own.

A bullmq Queue is bound to the loop that created it; it is cheap to keep one per queue. Each
connection (queues/redis/connections.py) has its own client: a queue's actions go to its own Redis.
The client is not the readers' shared one, so closing bullmq objects can never close it, and
it sends each write at most once (queues/redis/write_once.py): an action whose connection broke
after
it was sent is reported as of unknown outcome, never applied twice.
"""

from __future__ import annotations

import asyncio
import sys
import weakref

import redis.asyncio as aioredis
from bullmq import Queue

from queues.config.settings import on_change
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.redis.restricted import without_info
from queues.redis.write_once import write_once_client

_handles: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, tuple[dict[str, aioredis.Redis], dict[QueueRef, Queue]]
] = weakref.WeakKeyDictionary()


def queue_for_actions(ref: QueueRef) -> Queue:
    """This loop's bullmq Queue for ``ref``, on its connection's write-once client; on a
    Postgres store, on BullMQ's own Postgres backend (queues/postgres/bullmq_queues.py)."""
    if connections.is_postgres(ref.connection):
        from queues.postgres.bullmq_queues import postgres_queue

        return postgres_queue(ref)
    loop = asyncio.get_running_loop()
    clients, queues = _handles.setdefault(loop, ({}, {}))
    queue = queues.get(ref)
    if queue is None:
        client = clients.get(ref.connection)
        if client is None:
            client = clients[ref.connection] = write_once_client(ref.connection)
        queue = without_info(Queue(ref.name, {"connection": client, "prefix": ref.prefix}))
        queues[ref] = queue
    return queue


_retired: list[tuple[asyncio.AbstractEventLoop, aioredis.Redis]] = []


async def close_current() -> None:
    """Close this loop's actions clients (tests, commands that end their loop)."""
    loop = asyncio.get_running_loop()
    mine = [client for owner, client in _retired if owner is loop]
    _retired[:] = [(owner, client) for owner, client in _retired if owner is not loop]
    clients, _queues = _handles.pop(loop, ({}, {}))
    for client in [*mine, *clients.values()]:
        await client.aclose()
    if "queues.postgres.sessions" in sys.modules:  # a Postgres store was used in this process
        from queues.postgres import bullmq_queues, sessions

        await bullmq_queues.close_current()
        await sessions.close_current()


@on_change
def reset() -> None:
    """Settings changed: retire every client (closed later on its own loop)."""
    _retired.extend(
        (loop, client)
        for loop, (clients, _queues) in _handles.items()
        for client in clients.values()
    )
    _handles.clear()
