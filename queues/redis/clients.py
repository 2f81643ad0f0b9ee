"""The Redis clients of this process: one client (and pool) per running event loop and
configured connection (queues/redis/connections.py).

redis-py's asyncio connections belong to the loop that opened them. Daphne runs one loop, so
a deployment has one pool; tests and management commands that start their own loops get theirs.

Connections heal: a pooled connection that Redis closed (a restart, ``CLIENT KILL``) or that
sat idle is checked before it is used, and a read that meets a broken connection is sent again
on a fresh one, with backoff. Writes are another matter: see :mod:`queues.redis.write_once`. Nor do
the live follower's probes retry (its lease and its stream reads, ``retries=False``): they are
what says "Redis is unreachable" on every open page, which must say so as soon as a read
fails, not after the retries a page's read is given.

Each connection's URL names one server, a master watched by Redis Sentinel, or a Redis Cluster
(queues/redis/urls.py); :func:`open_client` builds each, so every client Bullpen opens follows a
failover. A ``connection`` of None is the default connection.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any, TypeVar, cast

import redis.asyncio as aioredis
from django.core.exceptions import ImproperlyConfigured
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

from queues.config.settings import get_config, on_change
from queues.redis import connections
from queues.redis.cluster import close_node_clients, is_cluster
from queues.redis.urls import RedisTarget, RedisUrlError, SentinelUrl, ServerUrl, parse_redis_url

T = TypeVar("T")
R = TypeVar("R", bound=aioredis.Redis)

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, aioredis.Redis]] = (
    weakref.WeakKeyDictionary()
)

# A read that meets a broken connection is sent again: 50 ms, 100 ms, ... up to 1 s apart,
# for at most 2.5 s, long enough for a restarting Redis to answer again. Only connection
# errors: a read that timed out has already waited REDIS_TIMEOUT, and waiting again would only
# delay the 503. (BusyLoadingError, Redis loading its data after a restart, is one of them.)
READ_RETRIES = 6
RETRY_FOR_S = 2.5
# An idle pooled connection is pinged before its next command after this many seconds: a
# connection whose peer vanished without closing it (a failover, a dropped NAT entry) fails
# the PING, not the command.
HEALTH_CHECK_INTERVAL = 5


class BoundedRetry(Retry):
    """redis-py's :class:`Retry`, that also stops retrying ``for_s`` seconds after a call began.

    redis-py nests its retries (a retried command reconnects with the same policy), which would
    multiply the wait while Redis is down; a deadline per call keeps the whole under ~2x it.
    """

    def __init__(self, backoff: ExponentialBackoff, retries: int, for_s: float) -> None:
        super().__init__(backoff, retries, supported_errors=(RedisConnectionError,))
        self.for_s = for_s

    async def call_with_retry(
        self,
        do: Callable[[], Awaitable[T]],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.for_s

        def retryable(error: Exception) -> bool:
            return loop.time() < deadline and (is_retryable is None or is_retryable(error))

        return await super().call_with_retry(do, fail, retryable, with_failure_count)


def read_retry() -> BoundedRetry:
    """The retry policy for reads (and for connecting, which is always safe to repeat); never
    longer than REDIS_TIMEOUT, the wait a request is promised before its 503."""
    for_s = min(RETRY_FOR_S, float(get_config()["REDIS_TIMEOUT"]))
    return BoundedRetry(ExponentialBackoff(cap=1.0, base=0.025), READ_RETRIES, for_s)


def no_retry() -> Retry:
    """One try: the caller is told of the first failure."""
    return Retry(NoBackoff(), 0, supported_errors=(RedisConnectionError,))


def client_options(*, blocking: bool = False, retries: bool = True) -> dict[str, Any]:
    """Options shared by every client Bullpen opens (``retries``: whether a read that meets
    a broken connection, and connecting, is tried again).

    Responses are decoded (the bullmq package needs it); bytes that are not UTF-8, which a
    hand-written job hash may hold, become U+FFFD instead of failing the whole page.
    """
    timeout = float(get_config()["REDIS_TIMEOUT"])
    return {
        "decode_responses": True,
        "encoding_errors": "replace",
        "socket_connect_timeout": timeout,
        # Blocking reads (XREAD BLOCK, worker waits) must not be cut by the socket timeout.
        "socket_timeout": None if blocking else timeout,
        "health_check_interval": HEALTH_CHECK_INTERVAL,
        "retry": read_retry() if retries else no_retry(),
        "retry_on_error": [],
    }


@lru_cache(maxsize=64)
def redis_target(url: str) -> RedisTarget:
    """What ``url`` names (parsed once per URL: clients are opened often)."""
    try:
        return parse_redis_url(url)
    except RedisUrlError as error:
        raise ImproperlyConfigured(f"A Bullpen Redis URL cannot be used: {error}") from None


def open_client(
    redis_class: type[R],
    options: dict[str, Any],
    cluster_class: type[Any] | None = None,
    connection: str | None = None,
) -> R:
    """A ``redis_class`` client of a configured Redis: the one server the connection's URL
    names, the current master of a Sentinel-watched service, or a Redis Cluster (a
    ``cluster_class`` client, redis-py's ``RedisCluster`` by default)."""
    url = connections.url_of(connection)
    target = redis_target(url)
    if isinstance(target, ServerUrl):
        return cast(R, redis_class.from_url(url, **options))
    if isinstance(target, SentinelUrl):
        # Sentinel and Cluster clients are imported by the sites that name such a URL alone.
        from queues.redis.sentinel import master_client

        return master_client(target, redis_class, options, float(get_config()["REDIS_TIMEOUT"]))
    from queues.redis.cluster import cluster_client

    # A RedisCluster is no Redis subclass, but it answers the same commands: callers that
    # reach below the command level (pools, raw connections) ask is_cluster() first.
    if cluster_class is None:
        return cast(R, cluster_client(target, options))
    return cast(R, cluster_client(target, options, cluster_class))


def new_client(
    *, blocking: bool = False, connection: str | None = None, retries: bool = True
) -> aioredis.Redis:
    """A client of its own, for a caller that blocks on it or must close it itself
    (:func:`close_client`)."""
    options = client_options(blocking=blocking, retries=retries)
    return open_client(aioredis.Redis, options, connection=connection)


async def close_client(client: aioredis.Redis) -> None:
    """Close a client of its own (:func:`new_client`): on a Redis Cluster, also the clients of
    single masters that reads through it opened (queues/redis/cluster.py), which closing the
    cluster client alone leaves open."""
    if is_cluster(client):
        await close_node_clients(client)
    await client.aclose()


def get_client(connection: str | None = None) -> aioredis.Redis:
    """The shared client of ``connection`` for the running event loop: reads, and writes safe
    to repeat."""
    # No connection named: Bullpen's own state, kept on the first Redis connection.
    name = connections.state_name() if connection is None else connection
    loop = asyncio.get_running_loop()
    mine = _clients.setdefault(loop, {})
    client = mine.get(name)
    if client is None:
        client = new_client(connection=name)
        mine[name] = client
    return client


# Clients replaced by a settings change, closed by close_current() on their own loop.
_retired: list[tuple[asyncio.AbstractEventLoop, aioredis.Redis]] = []


@on_change
def reset() -> None:
    """Retire every client: the settings they were made from changed."""
    _retired.extend((loop, client) for loop, mine in _clients.items() for client in mine.values())
    _clients.clear()


async def close_current() -> None:
    """Close the running loop's shared client (tests and commands that end their loop)."""
    loop = asyncio.get_running_loop()
    mine = [client for owner, client in _retired if owner is loop]
    _retired[:] = [(owner, client) for owner, client in _retired if owner is not loop]
    current = _clients.pop(loop, {})
    for each in [*mine, *current.values()]:
        await close_client(each)
