"""The bullmq package as a Redis user without CLIENT and INFO, as hosted Redis services give.

The package asks ``INFO`` for the server's version (it picks scripts by it, and how finely a
worker's blocking wait can be timed) and names a worker's connections with ``CLIENT SETNAME``
(for workers lists). Refused either, it fails. Here the version comes from ``HELLO`` instead,
which every user may send, and a worker that may not name its connections runs unnamed: it
works, but workers lists (which need ``CLIENT LIST``, refused too) cannot show it.
"""

from __future__ import annotations

from typing import Any

from bullmq import Queue
from bullmq.redis_connection import RedisConnection
from bullmq.utils import isRedisVersionLowerThan
from redis.exceptions import NoPermissionError


async def learn_redis_version(connection: RedisConnection) -> str | None:
    """The server's version on ``connection``, from ``INFO`` or, when refused, ``HELLO``."""
    try:
        version: str | None = await connection.getRedisVersion()
    except NoPermissionError:
        version = await _version_from_hello(connection)
    return version


def without_info(queue: Queue) -> Queue:
    """``queue``, asking ``HELLO`` for the server's version when ``INFO`` is refused (the
    package asks when it first picks a script by version)."""
    connection = queue.redisConnection
    if connection is None:
        return queue
    asking = connection.getRedisVersion

    async def get_redis_version() -> str | None:
        try:
            version: str | None = await asking()
        except NoPermissionError:
            version = await _version_from_hello(connection)
        return version

    connection.getRedisVersion = get_redis_version  # type: ignore[method-assign]
    return queue


async def _version_from_hello(connection: RedisConnection) -> str:
    version = _version(await connection.conn.execute_command("HELLO"))
    connection.version = version
    connection.capabilities = {
        "canBlockFor1Ms": not isRedisVersionLowerThan(version, "7.0.8"),
        "canDoubleTimeout": not isRedisVersionLowerThan(version, "6.0.0"),
    }
    return version


def version_in_hello(hello: Any) -> str:
    """The server's version in a reply to ``HELLO``."""
    return _version(hello)


def _version(hello: Any) -> str:
    """``version`` out of HELLO's reply: a map (RESP3) or a flat list of pairs (RESP2)."""
    if isinstance(hello, list):
        hello = dict(zip(hello[::2], hello[1::2], strict=False))
    value = hello.get("version", hello.get(b"version", "")) if isinstance(hello, dict) else ""
    return value.decode() if isinstance(value, bytes) else str(value)


def forget_client_name(connection: RedisConnection) -> None:
    """Connections opened from now on send no ``CLIENT SETNAME`` (the user may not)."""
    pool = getattr(connection.conn, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", None)
    if isinstance(kwargs, dict):
        kwargs.pop("client_name", None)
