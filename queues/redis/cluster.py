"""Clients of a Redis Cluster, built with redis-py's own asyncio ``RedisCluster``.

The client learns the slot map from the seed nodes, sends each command to the master holding
its key, follows MOVED and ASK redirections, and reloads the map after a failover. BullMQ keeps
a queue's keys in one slot only when the prefix or the queue name carries a hash tag
(``{bull}``, or ``{tenant-1}`` in the name): Bullpen's reads, scripts and the bullmq package's
scripts touch one queue's keys at a time, so they work with either.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from queues.redis.urls import ClusterUrl

# Options shared by every client (queues/redis/clients.py) that RedisCluster takes as well.
_SHARED = (
    "decode_responses",
    "encoding_errors",
    "socket_connect_timeout",
    "socket_timeout",
    "health_check_interval",
    "retry",
    "retry_on_error",
    "client_name",
)


# Per cluster client: a plain client of each master, for pipelines read in one pass
# (fastpipe.py), made with the cluster client's own connection settings.
_node_clients: weakref.WeakKeyDictionary[RedisCluster, dict[str, aioredis.Redis]] = (
    weakref.WeakKeyDictionary()
)
_settings: weakref.WeakKeyDictionary[RedisCluster, dict[str, Any]] = weakref.WeakKeyDictionary()
# Per cluster client: the masters that could not be reached lately (node name → when, why).
# Reads leave such a master's share out for ``NODE_RETRY_AFTER_S`` instead of waiting out its
# connect timeout and retries on every read; the masters left are read as usual.
_down: weakref.WeakKeyDictionary[RedisCluster, dict[str, tuple[float, str]]] = (
    weakref.WeakKeyDictionary()
)
NODE_RETRY_AFTER_S = 5.0


class BullpenCluster(RedisCluster):
    """redis-py's cluster client, but it learns the slot map before its first command, and a
    script is loaded on every master that can be reached: redis-py sends ``SCRIPT LOAD`` to all
    masters at once and fails it whole when one is down, which would stop every script
    (BullMQ's actions, Bullpen's reads) on the masters left. A script runs where its keys are,
    so the masters that answered are the ones that need it."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        # redis-py finds a command's slot only once it knows the cluster's nodes: a new
        # client's first command went to a random master instead (which would redirect it),
        # and failed outright when that master was the one down. Learn the map first.
        if self._initialize:
            await self.initialize()
        return await super().execute_command(*args, **kwargs)

    async def script_load(self, script: Any) -> Any:  # type: ignore[override]
        await self.initialize()
        names = [node.name for node in self.get_primaries()]
        failure: BaseException | None = None
        loaded: Any = None
        # One master after another: redis-py closes the client's connections when one fails,
        # which would break a load running on another master at the same time.
        for name in names:
            await self.initialize()
            node = self.get_node(node_name=name)
            if node is None:
                continue
            try:
                loaded = await self.execute_command("SCRIPT LOAD", script, target_nodes=node)
            except (RedisConnectionError, RedisTimeoutError, OSError) as error:
                failure = error
        if loaded is None and failure is not None:
            raise failure
        return loaded


def cluster_client(
    target: ClusterUrl, options: dict[str, Any], cluster_class: type[RedisCluster] = BullpenCluster
) -> RedisCluster:
    kept = {name: value for name, value in options.items() if name in _SHARED}
    client = cluster_class(
        startup_nodes=[ClusterNode(host, port) for host, port in target.nodes],
        username=target.username,
        password=target.password,
        ssl=target.tls,
        **kept,
    )
    _settings[client] = {
        **kept,
        "username": target.username,
        "password": target.password,
        "ssl": target.tls,
    }
    return client


def node_client(cluster: RedisCluster, node: ClusterNode) -> aioredis.Redis:
    """A plain client of one master of ``cluster`` (kept, one per master and cluster client)."""
    clients = _node_clients.setdefault(cluster, {})
    client = clients.get(node.name)
    if client is None:
        client = aioredis.Redis(host=node.host, port=int(node.port), **_settings.get(cluster, {}))
        clients[node.name] = client
    return client


def note_node_down(cluster: Any, node: str, detail: str) -> None:
    _down.setdefault(cluster, {})[node] = (time.monotonic(), detail)


def note_node_up(cluster: Any, node: str) -> None:
    _down.get(cluster, {}).pop(node, None)


def node_down(cluster: Any, node: str) -> str | None:
    """Why ``node`` was found unreachable within the last ``NODE_RETRY_AFTER_S``, or None."""
    found = _down.get(cluster, {}).get(node)
    if found is None or time.monotonic() - found[0] >= NODE_RETRY_AFTER_S:
        return None
    return found[1]


async def close_node_clients(cluster: Any) -> None:
    _down.pop(cluster, None)
    for client in _node_clients.pop(cluster, {}).values():
        await client.aclose()


def is_cluster(client: object) -> bool:
    return isinstance(client, RedisCluster)


async def masters(client: Any) -> list[Any]:
    """The cluster's masters (known once the client has connected)."""
    await client.initialize()
    return list(client.get_primaries())
