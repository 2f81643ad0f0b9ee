"""The schedulers of every queue on a Redis Cluster: queues on every master, each queue's script
call sent to the master holding its slot."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.test import AsyncClient

from tests.redis.test_cluster import TENANTS, ClusterPeer, cluster_peer, on_cluster
from tests.support.servers.cluster_topology import ClusterTopology

__all__ = ["cluster_peer", "on_cluster"]  # the fixtures, used by name

pytestmark = pytest.mark.django_db(transaction=True)


async def test_schedulers_of_queues_on_every_master(
    client: AsyncClient,
    cluster_topology: ClusterTopology,
    cluster_peer: ClusterPeer,
    on_cluster: dict[str, Any],
) -> None:
    for index, queue in enumerate(TENANTS):
        repeat = ["--every", "60000"] if index % 2 else ["--pattern", "0 3 * * *"]
        await asyncio.to_thread(
            cluster_peer, "upsert-scheduler", "--queue", queue, "--id", f"s{index}", *repeat
        )
    assert sum(1 for keys in cluster_topology.keys_per_node().values() if keys) == 3
    response = await client.get("/queues/api/schedulers/")
    assert response.status_code == 200, response.content[:300]
    rows = response.json()["schedulers"]
    assert sorted((row["queue"], row["id"]) for row in rows) == sorted(
        (queue, f"s{index}") for index, queue in enumerate(TENANTS)
    )
    # The every ones made their first job at once, and no worker takes it: overdue, first.
    assert [row["overdue"] for row in rows] == [True] * 3 + [False] * 3
    assert {row["nextJobState"] for row in rows[:3]} == {"waiting"}
    assert {row["nextJobState"] for row in rows[3:]} == {"delayed"}
