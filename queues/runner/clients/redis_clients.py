"""The runner's Redis clients, built from the project's one connection module.

A process running workers holds one shared client (producers, the dead-letter queue, schedulers,
fairness) and one client per worker, which BullMQ needs for its blocking wait and which carries
the worker's name for ``CLIENT LIST``. All of them come from :mod:`queues.redis.clients`'s options:
``REDIS_URL`` (``rediss://``, ``redis://user:password@host``, ``unix://`` and Sentinel's
``redis+sentinel://`` work: every connection goes to the master of the moment), decoded
responses, and no socket timeout on blocking clients (a 5 s timeout equal to the worker's 5 s
blocking wait makes delayed jobs and the limiter stall).

Two changes make a busy worker's Redis traffic cheaper. Commands are packed by hiredis:
redis-py's asyncio connections pack every command in pure Python even when hiredis is
installed, and a worker sends 20-argument Lua calls for every job. And a client's
non-blocking commands share one connection, written once per turn of the event loop
(multiplex.py), as a Node client does.

They heal like the dashboard's: connecting and reads are retried with backoff after Redis
restarts; writes whose connection broke after they were sent fail with ``WriteOutcomeUnknown``
for the worker to settle (settle.py).
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.asyncio.sentinel import SentinelManagedConnection, SentinelManagedSSLConnection

from queues.redis.clients import client_options, open_client
from queues.redis.cluster import is_cluster
from queues.runner.clients.multiplex import MultiplexedRedis

try:
    import hiredis
except ImportError:  # pragma: no cover - hiredis is in requirements.txt
    hiredis = None  # type: ignore[assignment]


class _HiredisPacking:
    """Mixin for redis-py's asyncio connection classes: pack commands with hiredis."""

    def pack_command(self, *args: Any) -> list[bytes]:
        head = args[0]
        # Commands named with a space ("CLIENT SETNAME") go to Redis as separate words.
        if isinstance(head, str) and " " in head:
            args = (*head.split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except (TypeError, UnicodeError):
            # memoryviews, bytearrays, lone surrogates, wrong types: redis-py encodes them, or
            # raises its own DataError.
            packed: list[bytes] = super().pack_command(*args)  # type: ignore[misc]
            return packed


class HiredisConnection(_HiredisPacking, Connection):
    pass


class HiredisSSLConnection(_HiredisPacking, SSLConnection):
    pass


class HiredisUnixConnection(_HiredisPacking, UnixDomainSocketConnection):
    pass


class HiredisSentinelConnection(_HiredisPacking, SentinelManagedConnection):
    pass


class HiredisSentinelSSLConnection(_HiredisPacking, SentinelManagedSSLConnection):
    pass


_PACKED = {
    Connection: HiredisConnection,
    SSLConnection: HiredisSSLConnection,
    UnixDomainSocketConnection: HiredisUnixConnection,
    SentinelManagedConnection: HiredisSentinelConnection,
    SentinelManagedSSLConnection: HiredisSentinelSSLConnection,
}


def runner_client(*, blocking: bool, connection: str | None = None) -> aioredis.Redis:
    """A client of ``connection``'s Redis (None: the default one) for the runner
    (``blocking`` for a worker)."""
    client: aioredis.Redis = open_client(
        MultiplexedRedis, client_options(blocking=blocking), connection=connection
    )
    if is_cluster(client):
        return client  # redis-py's cluster client, which keeps a connection per node itself
    pool = client.connection_pool
    if hiredis is not None:
        # The URL's scheme chose the class (TCP, TLS, unix socket, Sentinel's master): keep it,
        # add the packing.
        pool.connection_class = _PACKED.get(pool.connection_class, pool.connection_class)
    return client
