"""A Redis Cluster that lost a master (no replicas): a change sent to that master's slots is
refused before anything was sent, and says so ("not sent"), not "outcome unknown"; the queues of
the masters left are served, and those of the lost one are named as unreachable."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.test import AsyncClient, override_settings
from playwright.async_api import expect

from queues.actions import handles
from queues.redis import clients
from tests.redis.test_cluster import TENANTS, ClusterPeer
from tests.support.browser import chromium
from tests.support.markup import element, text
from tests.support.servers.cluster_topology import ClusterTopology
from tests.support.servers.live_server import start_bullpen, stop_bullpen

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def cluster_topology() -> Iterator[ClusterTopology]:
    """A cluster of this test's own (a master is killed), whose masters left serve their
    slots."""
    topology = ClusterTopology(full_coverage=False)
    try:
        topology.start()
        yield topology
    finally:
        topology.stop()


@pytest.fixture
def on_cluster(
    cluster_topology: ClusterTopology, bullpen_settings: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    cluster_topology.client().flushall()  # type: ignore[no-untyped-call]
    # The queue list as a deployment keeps it (scanned now and then, not on every request).
    config = {**bullpen_settings, "REDIS_URL": cluster_topology.url, "DISCOVERY_INTERVAL": 3600}
    with override_settings(BULLPEN=config):
        yield config


def master_of(topology: ClusterTopology, key: str) -> int:
    """The port of the master holding ``key``'s slot."""
    with redis.Redis(port=topology.ports[0]) as node:
        slot = int(node.execute_command("CLUSTER", "KEYSLOT", key))
        for start, end, master, *_ in node.execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return int(master[1])
    raise AssertionError(f"no master holds slot {slot}")


async def test_a_change_to_a_dead_masters_queue_is_not_sent(
    client: AsyncClient, cluster_topology: ClusterTopology, on_cluster: dict[str, Any]
) -> None:
    peer = ClusterPeer(cluster_topology)
    for queue in TENANTS:
        await asyncio.to_thread(peer, "add", "--queue", queue, "--name", "w", "--data", "{}")
    listed = (await client.get("/queues/api/queues/")).json()
    assert sorted(q["name"] for q in listed["queues"]) == sorted(TENANTS)
    victim = master_of(cluster_topology, f"bull:{TENANTS[0]}:meta")
    cluster_topology.processes[cluster_topology.ports.index(victim)].kill()
    cluster_topology.processes[cluster_topology.ports.index(victim)].wait(10)

    # Adding a job reads nothing first: the change itself meets the refused connection.
    added = await client.post(
        f"/queues/api/queues/{TENANTS[0]}/add/", {"name": "late", "data": "{}"}, headers=AUTH
    )
    assert added.status_code == 503, added.content[:300]
    error = added.json()["error"]
    assert "not sent" in error and "outcome" not in error.lower(), error
    await forget_the_dead_master()


def kill(topology: ClusterTopology, port: int) -> None:
    process = topology.processes[topology.ports.index(port)]
    process.kill()
    process.wait(10)


async def queues_on_a_cluster_without(
    client: AsyncClient, topology: ClusterTopology
) -> tuple[ClusterPeer, list[str], list[str]]:
    """Jobs in every tenant's queue (``n + 1`` in the n-th, one of them failed), listed once;
    then the master of the first is killed. The queues it held, and those on the masters left."""
    peer = ClusterPeer(topology)
    for index, queue in enumerate(TENANTS):
        await asyncio.to_thread(
            peer, "add-bulk", "--queue", queue, "--name", "w", "--count", str(index + 1)
        )
        await asyncio.to_thread(peer, "work", "--queue", queue, "--count", "1", "--fail")
    listed = (await client.get("/queues/api/queues/")).json()
    assert sorted(q["name"] for q in listed["queues"]) == sorted(TENANTS)
    victim = master_of(topology, f"bull:{TENANTS[0]}:meta")
    dead = [q for q in TENANTS if master_of(topology, f"bull:{q}:meta") == victim]
    kill(topology, victim)
    return peer, dead, [q for q in TENANTS if q not in dead]


async def test_the_list_serves_the_masters_left_and_names_the_lost_ones(
    client: AsyncClient, cluster_topology: ClusterTopology, on_cluster: dict[str, Any]
) -> None:
    peer, dead, healthy = await queues_on_a_cluster_without(client, cluster_topology)
    assert healthy, "every queue on one master: the tenants' tags should spread them"

    answer = await client.get("/queues/api/queues/")
    assert answer.status_code == 200, answer.content[:300]
    body = answer.json()
    counts = {q["name"]: q["counts"] for q in body["queues"]}
    assert sorted(counts) == sorted(healthy)
    for queue in healthy:
        truth = (await asyncio.to_thread(peer, "inspect", "--queue", queue))["counts"]
        assert {state: counts[queue][state] for state in truth} == truth
        assert truth["failed"] and sum(truth.values()) == TENANTS.index(queue) + 1
    lost = {q["name"]: q for q in body["unreachableQueues"]}
    assert sorted(lost) == sorted(dead)
    assert all(q["error"] for q in lost.values()), lost

    page = await client.get("/queues/")
    assert page.status_code == 200, page.content[:300]
    notice = text(element(page.content.decode(), "div", id="unreachable-queues"))
    for queue in dead:
        assert queue in notice, notice
    await forget_the_dead_master()


async def test_a_scan_with_a_master_down_finds_the_others_queues_and_keeps_the_lost_ones(
    client: AsyncClient, cluster_topology: ClusterTopology, on_cluster: dict[str, Any]
) -> None:
    # Every request scans: the scan itself meets the dead master.
    with override_settings(BULLPEN={**on_cluster, "DISCOVERY_INTERVAL": 0}):
        _peer, dead, healthy = await queues_on_a_cluster_without(client, cluster_topology)
        answer = await client.get("/queues/api/queues/")
        assert answer.status_code == 200, answer.content[:300]
        body = answer.json()
        assert sorted(q["name"] for q in body["queues"]) == sorted(healthy)
        # The last scan's queues of the lost master are named, not forgotten.
        assert sorted(q["name"] for q in body["unreachableQueues"]) == sorted(dead)
    await forget_the_dead_master()


async def test_a_search_over_every_queue_names_those_it_could_not_read(
    client: AsyncClient, cluster_topology: ClusterTopology, on_cluster: dict[str, Any]
) -> None:
    _peer, dead, healthy = await queues_on_a_cluster_without(client, cluster_topology)
    answer = await client.get("/queues/api/search/", {"q": "w", "render": "html"})
    assert answer.status_code == 200
    body = b"".join([chunk async for chunk in answer.streaming_content])
    lines = [json.loads(line) for line in body.splitlines()]
    assert not [line for line in lines if line["type"] == "error"], lines
    matched = {line["queue"]: line["matched"] for line in lines if line["type"] == "queue"}
    # Every job of a healthy queue is named "w": all of them match.
    assert matched == {queue: TENANTS.index(queue) + 1 for queue in healthy}
    skipped = {line["queue"]: line for line in lines if line["type"] == "skipped"}
    assert sorted(skipped) == sorted(dead)
    for queue, line in skipped.items():
        assert line["error"] and queue in line["html"] and "Not searched" in line["html"]
    assert lines[-1]["type"] == "progress" and lines[-1]["done"] is True
    await forget_the_dead_master()


async def test_an_action_on_a_queue_of_a_master_left_works_at_once(
    client: AsyncClient, cluster_topology: ClusterTopology, on_cluster: dict[str, Any]
) -> None:
    peer, _dead, healthy = await queues_on_a_cluster_without(client, cluster_topology)
    queue = healthy[0]
    failed = await client.get(f"/queues/api/queues/{queue}/jobs/?state=failed")
    assert failed.status_code == 200, failed.content[:300]
    job_id = failed.json()["jobs"][0]["id"]

    retried = await client.post(f"/queues/api/queues/{queue}/jobs/{job_id}/retry/", headers=AUTH)
    assert retried.status_code == 200, retried.content[:300]
    status = await asyncio.to_thread(peer, "job-status", "--queue", queue, "--id", job_id)
    assert status["state"] == "waiting"
    await forget_the_dead_master()


@pytest.mark.browser
async def test_the_live_status_names_the_lost_master_and_stays_live(
    cluster_topology: ClusterTopology, chromium_path: str, tmp_path: Path
) -> None:
    cluster_topology.client().flushall()  # type: ignore[no-untyped-call]
    peer = ClusterPeer(cluster_topology)
    for queue in TENANTS:
        await asyncio.to_thread(peer, "add", "--queue", queue, "--name", "first")
    victim = master_of(cluster_topology, f"bull:{TENANTS[0]}:meta")
    dead = [q for q in TENANTS if master_of(cluster_topology, f"bull:{q}:meta") == victim]
    healthy = [q for q in TENANTS if q not in dead]
    server = start_bullpen(cluster_topology.url, tmp_path / "daphne.log")
    try:
        async with chromium(chromium_path) as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await page.goto(f"{server.url}/queues/")
            status = page.locator("#live-status")
            await expect(status).to_have_attribute("data-state", "live")
            # Every state the header takes from now on.
            await page.evaluate(
                """() => {
                  const pill = document.getElementById("live-status");
                  window.seenStates = [];
                  new MutationObserver(() => window.seenStates.push(pill.dataset.state))
                    .observe(pill, { attributes: true, attributeFilter: ["data-state"] });
                }"""
            )
            kill(cluster_topology, victim)
            await expect(status).to_have_attribute("data-state", "partial", timeout=20_000)
            await expect(status).to_contain_text(f"127.0.0.1:{victim}")
            # The masters left still flow live.
            cell = page.locator(f'tr[data-queue="{healthy[0]}"] td[data-state="waiting"]')
            await asyncio.to_thread(peer, "add", "--queue", healthy[0], "--name", "next")
            await expect(cell).to_have_text("2", timeout=10_000)
            # Several heartbeats (every 2 s) later the header still says the same: it never
            # flipped to "unreachable" for the whole page.
            await page.wait_for_timeout(7_000)
            seen = await page.evaluate("window.seenStates")
            assert "down" not in seen, seen
            await expect(status).to_have_attribute("data-state", "partial")
            assert not await page.evaluate("document.body.classList.contains('stale')")

            await page.reload()
            notice = page.locator("#unreachable-queues")
            for queue in dead:
                await expect(notice).to_contain_text(queue)
            await expect(page.locator(f'tr[data-queue="{healthy[0]}"]')).to_have_count(1)
            await browser.close()
    finally:
        stop_bullpen(server)


async def forget_the_dead_master() -> None:
    """Close this test's clients now: those holding a connection to the dead master warn when
    collected, which would fail whichever test runs then."""
    with contextlib.suppress(Exception):
        await handles.close_current()
    with contextlib.suppress(Exception):
        await clients.close_current()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gc.collect()
