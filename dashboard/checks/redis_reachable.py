"""The deployment check that every configured Redis answers a PING."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Warning, register

from dashboard.checks.mounting import TAG, usable_config
from queues.redis.urls import redact  # the check messages hide passwords

_PROBE_TIMEOUT = 1.0  # seconds: a check must not hold up manage.py for long


# A deployment check: only ``check --deploy`` opens a connection, never ``migrate`` or
# ``runserver``, which run the other checks on every start.
@register(TAG, deploy=True)
def check_redis(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    config = usable_config()
    if config is None:
        return []
    from queues.redis.connections import configured

    timeout = min(float(config["REDIS_TIMEOUT"]), _PROBE_TIMEOUT)
    found: list[CheckMessage] = []
    several = len(configured()) > 1
    for connection in configured():
        if connection.is_postgres:
            continue  # dashboard/checks/postgres_store.py judges those
        try:
            _ping(connection.url, timeout)
        except Exception as error:  # a check reports; it never stops manage.py
            named = f" (connection {connection.name!r})" if several else ""
            found.append(
                Warning(
                    f"Redis at {redact(connection.url)}{named} is unreachable: {error}",
                    hint="Its pages answer 503 until it is. Check BULLPEN['REDIS_URL'] or "
                    "BULLPEN['CONNECTIONS'] (rediss:// for TLS, redis+sentinel:// for Sentinel, "
                    "redis+cluster:// for a Cluster) and that this machine can reach it.",
                    id="bullpen.W009",
                )
            )
    return found


def _ping(url: str, timeout: float) -> None:
    """PING the server ``url`` names, the master its sentinels name, or a cluster's nodes."""
    import redis
    from redis.cluster import ClusterNode, RedisCluster

    from queues.redis.sentinel import sync_master_client
    from queues.redis.urls import ClusterUrl, SentinelUrl, parse_redis_url

    options: dict[str, Any] = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
    target = parse_redis_url(url)
    if isinstance(target, SentinelUrl):
        with sync_master_client(target, options, timeout) as master:
            master.ping()
        return
    if isinstance(target, ClusterUrl):
        cluster = RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in target.nodes],  # type: ignore[no-untyped-call]
            username=target.username,
            password=target.password,
            ssl=target.tls,
            **options,
        )
        try:
            cluster.ping(target_nodes=RedisCluster.ALL_NODES)
        finally:
            cluster.close()
        return
    client = redis.Redis.from_url(url, **options)
    try:
        client.ping()
    finally:
        client.close()
