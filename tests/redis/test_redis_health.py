"""The Redis health of every configured connection (``api/redis/`` and the overview's panel),
read from real servers: a healthy one; one set to ``allkeys-lru`` near its ``maxmemory``, with
a replica and no persistence; the test server as a Redis user refused INFO and CONFIG; one that
is down; a Redis Cluster, master by master."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import AsyncClient, override_settings

from tests.support.servers.cluster_topology import ClusterTopology
from tests.support.servers.redis_server import RedisServer, free_port
from tests.support.worker_fixtures import wait_for

USERS = {"amy": "amy-pass", "operator": "s3cret-pass"}


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


@pytest.fixture(scope="module")
def lru_pair() -> Iterator[tuple[RedisServer, RedisServer]]:
    """A master (the "lru" connection) and its replica, neither persisting anything."""
    master, replica = RedisServer(), RedisServer()
    master.start()
    replica.start()
    try:
        yield master, replica
    finally:
        replica.stop()
        master.stop()


async def _replicated(master: RedisServer, replica: RedisServer) -> int:
    """Link the replica and wait for its master to count it; the master's limit then put at
    about 90 % of what it uses, under ``allkeys-lru``. Returns the limit."""
    with replica.client() as client:
        client.execute_command("REPLICAOF", "127.0.0.1", str(master.port))
    with master.client() as admin:

        async def linked() -> bool:
            return int(admin.info("replication")["connected_slaves"]) == 1

        await wait_for("the replica linked", linked)
        used = int(admin.info("memory")["used_memory"])
        limit = int(used / 0.9)
        admin.config_set("maxmemory-policy", "allkeys-lru")
        admin.config_set("maxmemory", str(limit))
    return limit


@pytest.fixture
def four_connections(
    bullpen_settings: dict[str, Any], restricted_redis_url: str, lru_pair: Any
) -> Iterator[None]:
    config = {k: v for k, v in bullpen_settings.items() if k != "REDIS_URL"}
    config["CONNECTIONS"] = {
        "main": {"URL": bullpen_settings["REDIS_URL"]},
        "lru": {"URL": lru_pair[0].url},
        "limited": {"URL": restricted_redis_url},
        "gone": {"URL": f"redis://127.0.0.1:{free_port()}/0"},
    }
    with override_settings(BULLPEN=config):
        yield


async def test_every_connection_answers_with_its_figures_and_warnings(
    client: AsyncClient, four_connections: None, lru_pair: Any, redis_client: Any
) -> None:
    limit = await _replicated(*lru_pair)
    response = await client.get("/queues/api/redis/")
    assert response.status_code == 200, response.content[:300]
    entries = {entry["name"]: entry for entry in response.json()["connections"]}
    assert list(entries) == ["main", "lru", "limited", "gone"]

    main = entries["main"]
    assert main["up"] is True and main["error"] is None and main["node"] is None
    assert main["version"] == redis_client.info("server")["redis_version"]
    assert main["usedMemory"] > 0 and main["maxMemory"] == 0
    assert main["maxmemoryPolicy"] == "noeviction"
    assert main["clients"] >= 1 and main["opsPerSec"] >= 0 and main["uptime"] >= 0
    assert main["fragmentation"] > 0 and 0 < main["latencyMs"] < 5000
    assert main["warnings"] == []  # no limit, no eviction, no replica to lose data to

    lru = entries["lru"]
    assert lru["maxmemoryPolicy"] == "allkeys-lru" and lru["maxMemory"] == limit
    assert lru["replicas"] == 1 and lru["role"] == "master"
    codes = [warning["code"] for warning in lru["warnings"]]
    assert codes == ["eviction-policy", "memory-high", "persistence-off"]
    eviction, memory, persistence = lru["warnings"]
    assert eviction["params"] == {"policy": "allkeys-lru"}
    assert "Set maxmemory-policy to noeviction" in eviction["text"]
    assert memory["params"]["percent"] > 80 and "raise maxmemory" in memory["text"]
    assert "appendonly yes" in persistence["text"]

    # The restricted user: what it could read, and a warning naming what it could not.
    limited = entries["limited"]
    assert limited["up"] is True and limited["version"] == main["version"]
    assert limited["latencyMs"] is not None
    # Memory from MEMORY STATS, which the user may run; its limit and clients are in INFO only.
    assert limited["usedMemory"] > 0 and limited["fragmentation"] > 0
    assert limited["maxMemory"] is None and limited["maxmemoryPolicy"] is None
    assert limited["clients"] is None and limited["opsPerSec"] is None
    assert [w["code"] for w in limited["warnings"]] == ["commands-refused"]
    assert limited["warnings"][0]["params"] == {"commands": "INFO, CONFIG GET"}
    assert "may not run INFO, CONFIG GET" in limited["warnings"][0]["text"]

    gone = entries["gone"]
    assert gone["up"] is False and str(gone["error"]).startswith("Error 111 connecting")
    assert gone["usedMemory"] is None and gone["warnings"] == []

    # Found down, it is not waited on again for a few seconds: the next answer comes at once.
    started = time.monotonic()
    again = (await client.get("/queues/api/redis/")).json()["connections"]
    assert time.monotonic() - started < 2.0
    assert again[3]["up"] is False and again[3]["error"] == gone["error"]

    # The overview's panel says the same, in the reader's language.
    panel = await client.get("/queues/redis/", headers={"Accept-Language": "de"})
    text = panel.content.decode()
    assert panel.status_code == 200
    assert text.count('data-testid="redis-server"') == 4
    assert "Setzen Sie maxmemory-policy auf noeviction" in text
    assert "darf INFO, CONFIG GET nicht ausführen" in text
    assert 'data-testid="redis-down"' in text and "Nicht erreichbar" in text


async def test_a_cluster_is_read_master_by_master(
    client: AsyncClient, cluster_topology: ClusterTopology, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "REDIS_URL": cluster_topology.url}):
        response = await client.get("/queues/api/redis/")
    entries = response.json()["connections"]
    nodes = sorted(entry["node"] for entry in entries)
    assert nodes == sorted(f"127.0.0.1:{port}" for port in cluster_topology.ports)
    assert all(entry["name"] == "default" and entry["up"] for entry in entries)
    assert all(entry["usedMemory"] > 0 and entry["warnings"] == [] for entry in entries)


@pytest.mark.django_db(transaction=True)
async def test_with_queue_access_only_superusers_see_server_figures(
    client: AsyncClient, bullpen_settings: dict[str, Any]
) -> None:
    rules = [{"QUEUES": "t1-*", "VIEW": ["scope:t1"]}, {"QUEUES": "*", "VIEW": ["*"]}]
    config = {k: v for k, v in bullpen_settings.items() if k != "READ_ACCESS"}
    config.update(BASIC_AUTH_PLAIN=USERS, BASIC_AUTH_SCOPES={"amy": ["t1"]}, QUEUE_ACCESS=rules)
    with override_settings(BULLPEN=config):
        refused = await client.get("/queues/api/redis/", headers=auth("amy"))
        assert refused.status_code == 403 and "not shown" in refused.json()["error"]
        panel = await client.get("/queues/redis/", headers=auth("amy"))
        assert panel.status_code == 200 and panel.content == b""
        # The overview still loads for her, with the placeholder the empty panel replaces.
        overview = await client.get("/queues/", headers=auth("amy"))
        assert overview.status_code == 200

        admin = await get_user_model().objects.acreate_superuser("root", "", "root-pass")
        await client.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
        allowed = await client.get("/queues/api/redis/")
        assert allowed.status_code == 200
        assert [entry["name"] for entry in allowed.json()["connections"]] == ["default"]
        panel = await client.get("/queues/redis/")
        assert b'data-testid="redis-server"' in panel.content

    # Without QUEUE_ACCESS whoever may read the dashboard sees them.
    assert (await AsyncClient().get("/queues/api/redis/")).status_code == 200
