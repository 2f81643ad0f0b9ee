"""Clients of the master that Redis Sentinel names, built with redis-py's own Sentinel support.

Every connection is opened to the address the sentinels give at that moment, so after a
failover the next connection goes to the new master: redis-py asks the sentinels again when a
connection breaks or when the old master, now a replica, refuses a write (``READONLY``), and it
drops idle connections to an address that is no longer the master's.

Each client gets its own sentinel manager, closed with the client: a client belongs to one event
loop, and so do the connections to the sentinels.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis
import redis.sentinel
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import NoBackoff
from redis.retry import Retry as SyncRetry

from queues.redis.urls import SentinelUrl

R = TypeVar("R", bound=aioredis.Redis)


class OwnedSentinelPool(SentinelConnectionPool):
    """A Sentinel connection pool that closes its sentinel manager when it is closed."""

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            await self.sentinel_manager.aclose()


def _sentinel_options(target: SentinelUrl, timeout: float) -> dict[str, Any]:
    return {
        **target.sentinel_options(),
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "decode_responses": True,
    }


def master_client(
    target: SentinelUrl, redis_class: type[R], options: dict[str, Any], timeout: float
) -> R:
    """A ``redis_class`` client of the master ``target`` names, with ``options`` as from_url's."""
    # One try per sentinel: an unreachable sentinel is skipped, and the caller's retry policy
    # decides how long to keep asking.
    sentinel_kwargs = {**_sentinel_options(target, timeout), "retry": Retry(NoBackoff(), 0)}
    manager = Sentinel(list(target.sentinels), sentinel_kwargs=sentinel_kwargs)  # type: ignore[no-untyped-call]
    client: R = manager.master_for(
        target.service,
        redis_class=redis_class,
        connection_pool_class=OwnedSentinelPool,
        **options,
        **target.master_options(),
    )
    return client


@contextmanager
def sync_master_client(
    target: SentinelUrl, options: dict[str, Any], timeout: float
) -> Iterator[redis.Redis]:
    """A synchronous client of the master (for ``manage.py check --deploy``), closed after."""
    sentinel_kwargs = {**_sentinel_options(target, timeout), "retry": SyncRetry(NoBackoff(), 0)}
    manager = redis.sentinel.Sentinel(  # type: ignore[no-untyped-call]
        list(target.sentinels), sentinel_kwargs=sentinel_kwargs
    )
    client: redis.Redis = manager.master_for(  # type: ignore[no-untyped-call]
        target.service, **options, **target.master_options()
    )
    try:
        yield client
    finally:
        client.close()
        for each in manager.sentinels:
            each.close()
