"""How each configured Redis server is doing, as BullMQ needs it: version, memory against its
limit and the limit's eviction policy, clients, operations per second, one PING's round trip,
uptime, and the warnings of :mod:`queues.redis.health_warnings`.

One pipelined round trip per server (INFO, then CONFIG GET of the RDB schedule) and one timed
PING. A Redis user that may not run INFO or CONFIG still gets its entry: the figures it could
read (the version from HELLO, which every user may send; memory from MEMORY STATS where
allowed; the PING) and a warning naming what
was refused. A server that cannot be reached is listed as down with the reason; the others
answer all the same; one found down, here or by the overview, is not tried again for a few
seconds. A Redis Cluster is read master by master, an entry per master (``node`` names it):
memory limits, policies and persistence are each master's own, so a sum would hide the one
master about to fill up.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import redis.exceptions

from queues.redis import connections, reachability
from queues.redis.clients import get_client
from queues.redis.cluster import is_cluster, masters, node_client
from queues.redis.errors import reason
from queues.redis.health_warnings import HealthWarning, warnings_of
from queues.redis.restricted import version_in_hello
from queues.redis.unreachable import UNREACHABLE


@dataclass
class ServerHealth:
    """One server's figures; None where they could not be read."""

    name: str
    node: str | None = None  # a Cluster master's host:port; None for a single server
    up: bool = True
    error: str | None = None
    version: str | None = None
    used_memory: int | None = None
    max_memory: int | None = None  # 0: no limit
    maxmemory_policy: str | None = None
    fragmentation: float | None = None
    clients: int | None = None
    ops_per_sec: int | None = None
    latency_ms: float | None = None
    uptime_s: int | None = None
    role: str | None = None
    replicas: int | None = None
    warnings: list[HealthWarning] = field(default_factory=list)

    @property
    def memory_share(self) -> float | None:
        """Used memory as a share of the limit (None without a limit or a reading)."""
        if not self.max_memory or self.used_memory is None:
            return None
        return self.used_memory / self.max_memory


async def read_health() -> list[ServerHealth]:
    """Every configured connection's health (each Cluster master's), in the settings' order."""
    found = await asyncio.gather(*(_connection(name) for name in connections.redis_names()))
    return [server for servers in found for server in servers]


async def _connection(name: str) -> list[ServerHealth]:
    # A server found down moments ago (by the overview, say) is not waited on again: its
    # connect attempts and their retries would hold the answer for seconds.
    known = reachability.unreachable().get(name) if reachability.skip(name) else None
    if known is not None:
        return [ServerHealth(name, up=False, error=known)]
    try:
        client: Any = get_client(name)
        if is_cluster(client):
            nodes = await masters(client)
            reads = (_server(name, node_client(client, node), node.name) for node in nodes)
            return list(await asyncio.gather(*reads))
        found = await _server(name, client, None)
    except UNREACHABLE as error:
        found = ServerHealth(name, up=False, error=reason(error))
    if found.up:
        reachability.note_up(name)
    else:
        reachability.note_down(name, found.error or "")
    return [found]


async def _server(name: str, client: Any, node: str | None) -> ServerHealth:
    server = ServerHealth(name, node)
    try:
        await _read(server, client)
    except UNREACHABLE as error:
        return ServerHealth(name, node, up=False, error=reason(error))
    return server


async def _read(server: ServerHealth, client: Any) -> None:
    async with client.pipeline(transaction=False) as pipe:
        pipe.info()
        pipe.config_get("save")
        info, config = await pipe.execute(raise_on_error=False)
    refused: list[str] = []
    aof_enabled: bool | None = None
    save: str | None = None
    if _refused(info):
        refused.append("INFO")
        server.version = version_in_hello(await client.execute_command("HELLO"))
        await _memory_without_info(server, client)
    elif isinstance(info, dict):
        _figures(server, info)
        aof_enabled = bool(info.get("aof_enabled"))
    if _refused(config):
        refused.append("CONFIG GET")
    elif isinstance(config, dict):
        save = str(config.get("save", ""))
    started = time.perf_counter()
    await client.ping()
    server.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    server.warnings = warnings_of(
        policy=server.maxmemory_policy,
        used=server.used_memory,
        limit=server.max_memory,
        aof_enabled=aof_enabled,
        save=save,
        replicas=server.replicas,
        refused=refused,
    )


async def _memory_without_info(server: ServerHealth, client: Any) -> None:
    """Used memory and fragmentation from MEMORY STATS, which a user refused INFO may still be
    allowed (the limit and its policy are only in INFO and CONFIG)."""
    try:
        stats = await client.memory_stats()
    except redis.exceptions.NoPermissionError:
        return
    allocated = _float(stats.get("total.allocated"))
    server.used_memory = None if allocated is None else int(allocated)
    server.fragmentation = _float(stats.get("fragmentation"))


def _refused(reply: Any) -> bool:
    return isinstance(reply, redis.exceptions.NoPermissionError)


def _figures(server: ServerHealth, info: dict[str, Any]) -> None:
    """The figures out of INFO's default sections (server, clients, memory, persistence,
    stats, replication)."""
    server.version = _text(info.get("redis_version"))
    server.used_memory = _number(info.get("used_memory"))
    server.max_memory = _number(info.get("maxmemory"))
    server.maxmemory_policy = _text(info.get("maxmemory_policy"))
    server.fragmentation = _float(info.get("mem_fragmentation_ratio"))
    server.clients = _number(info.get("connected_clients"))
    server.ops_per_sec = _number(info.get("instantaneous_ops_per_sec"))
    server.uptime_s = _number(info.get("uptime_in_seconds"))
    server.role = _text(info.get("role"))
    server.replicas = _number(info.get("connected_slaves"))


def _number(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _float(value: Any) -> float | None:
    try:
        return float(value) if isinstance(value, str | int | float) else None
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
