"""Bullpen on a Redis Cluster: three masters, queues spread over them by hash tags in their names
(``{t1}-mail``), written and worked by Node BullMQ through ioredis' Cluster client."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from django.test import AsyncClient, override_settings
from playwright.async_api import expect

from dashboard.checks import redis_reachable
from queues.runner import Producer, default_registry
from tests.support.browser import chromium
from tests.support.paths import ROOT
from tests.support.peer import PEER, Peer
from tests.support.servers.cluster_topology import ClusterTopology
from tests.support.servers.live_server import start_bullpen, stop_bullpen
from tests.support.worker_fixtures import WorkerProcess, lines_of, wait_for

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
TENANTS = [f"{{t{n}}}-mail" for n in range(1, 7)]
TAGGED = "{bull}"


class ClusterPeer(Peer):
    """The Node BullMQ peer on the cluster (ioredis ``Cluster``)."""

    def __init__(self, topology: ClusterTopology) -> None:
        super().__init__("")
        self.topology = topology

    def connection_flags(self) -> list[str]:
        return ["--cluster", self.topology.nodes, "--prefix", "bull"]


@pytest.fixture
def cluster_peer(cluster_topology: ClusterTopology) -> ClusterPeer:
    if not (ROOT / "tests" / "interop" / "node_modules" / "bullmq").exists():
        pytest.fail("Node peer not installed: run ./run test (it runs npm ci in tests/interop)")
    assert PEER.exists()
    return ClusterPeer(cluster_topology)


@pytest.fixture
def on_cluster(
    cluster_topology: ClusterTopology, bullpen_settings: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    cluster_topology.client().flushall()  # type: ignore[no-untyped-call]
    config = {**bullpen_settings, "REDIS_URL": cluster_topology.url}
    with override_settings(BULLPEN=config):
        yield config


@pytest.mark.django_db(transaction=True)
async def test_pages_api_and_actions_on_queues_spread_over_the_masters(
    client: AsyncClient,
    cluster_topology: ClusterTopology,
    cluster_peer: ClusterPeer,
    on_cluster: dict[str, Any],
) -> None:
    for index, queue in enumerate(TENANTS):
        await asyncio.to_thread(
            cluster_peer, "add-bulk", "--queue", queue, "--name", "w", "--count", str(index + 1)
        )
    await asyncio.to_thread(
        cluster_peer, "add", "--queue", TENANTS[1], "--name", "bad", "--data",
        json.dumps({"error": "upstream answered 502"}),
    )  # fmt: skip
    await asyncio.to_thread(cluster_peer, "work", "--queue", TENANTS[1], "--count", "3", "--fail")
    # The queues live on every master, not on one.
    assert sum(1 for keys in cluster_topology.keys_per_node().values() if keys) == 3

    listed = (await client.get("/queues/api/queues/")).json()
    counts = {q["name"]: q["counts"] for q in listed["queues"]}
    assert sorted(counts) == sorted(TENANTS)
    assert [counts[q]["waiting"] for q in TENANTS] == [1, 0, 3, 4, 5, 6]
    assert counts[TENANTS[1]]["failed"] == 3
    overview = await client.get("/queues/")
    assert overview.status_code == 200, overview.content.decode()[-3000:]
    page = await client.get(f"/queues/q/{TENANTS[3]}/?state=waiting")
    assert page.status_code == 200 and page.content.count(b"<tr data-job-id=") == 4
    failed = (await client.get(f"/queues/api/queues/{TENANTS[1]}/jobs/?state=failed")).json()
    job_id = failed["jobs"][0]["id"]
    detail = await client.get(f"/queues/q/{TENANTS[1]}/jobs/{job_id}/")
    assert detail.status_code == 200 and b"upstream answered 502" in detail.content
    groups = (await client.get(f"/queues/api/queues/{TENANTS[1]}/failure-groups/")).json()
    assert sum(g["count"] for g in groups["groups"]) == 3
    assert groups["groups"][0]["trend"]["lastDay"]  # Bullpen's own keys share one slot

    # Actions go through the bullmq package's scripts, to the master holding the queue.
    retried = await client.post(
        f"/queues/api/queues/{TENANTS[1]}/jobs/{job_id}/retry/", headers=AUTH
    )
    assert retried.status_code == 200, retried.content[:300]
    status = await asyncio.to_thread(
        cluster_peer, "job-status", "--queue", TENANTS[1], "--id", job_id
    )
    assert status["state"] == "waiting"
    paused = await client.post(f"/queues/api/queues/{TENANTS[4]}/pause/", headers=AUTH)
    assert paused.status_code == 200, paused.content[:300]
    listed = (await client.get("/queues/api/queues/")).json()
    assert {q["name"]: q["paused"] for q in listed["queues"]}[TENANTS[4]] is True
    # A bulk action runs after its answer, its records under Bullpen's hash-tagged keys.
    retry_all = await client.post(f"/queues/api/queues/{TENANTS[1]}/retry/", headers=AUTH)
    assert retry_all.status_code in (200, 202), retry_all.content[:300]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        listed = (await client.get("/queues/api/queues/")).json()
        if {q["name"]: q["counts"] for q in listed["queues"]}[TENANTS[1]]["failed"] == 0:
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError("retry-all did not empty the failed set")
    # manage.py check reaches every node of the cluster.
    assert redis_reachable.check_redis() == []
    # Node's worker completes what Bullpen retried.
    done = await asyncio.to_thread(cluster_peer, "work", "--queue", TENANTS[1], "--count", "3")
    assert done["completed"] == 3


@pytest.mark.browser
async def test_live_counts_flow_from_every_master(
    cluster_topology: ClusterTopology,
    cluster_peer: ClusterPeer,
    chromium_path: str,
    tmp_path: Path,
) -> None:
    cluster_topology.client().flushall()  # type: ignore[no-untyped-call]
    for queue in TENANTS[:3]:
        await asyncio.to_thread(cluster_peer, "add", "--queue", queue, "--name", "first")
    server = start_bullpen(cluster_topology.url, tmp_path / "daphne.log")
    try:
        ws_url = server.url.replace("http://", "ws://") + "/ws/bullpen/"
        async with websockets.connect(ws_url, origin=server.url) as socket:  # type: ignore[arg-type]
            await socket.send(json.dumps({"watch": "overview"}))
            await _waiting_reaches(socket, {q: 1 for q in TENANTS[:3]}, 20)
            # A job added on each master shows within a few seconds, without a reload.
            started = time.monotonic()
            for queue in TENANTS[:3]:
                await asyncio.to_thread(cluster_peer, "add", "--queue", queue, "--name", "next")
            await _waiting_reaches(socket, {q: 2 for q in TENANTS[:3]}, 15)
            print(f"live counts from 3 masters after {time.monotonic() - started:.1f} s")
        # In Chromium: the overview lists them, and a job added on a master shows live.
        async with chromium(chromium_path) as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await page.goto(f"{server.url}/queues/")
            await expect(page.locator("#live-status")).to_have_text("live")
            cell = page.locator(f'tr[data-queue="{TENANTS[2]}"] td[data-state="waiting"]')
            await expect(cell).to_have_text("2")
            await asyncio.to_thread(cluster_peer, "add", "--queue", TENANTS[2], "--name", "third")
            await expect(cell).to_have_text("3", timeout=10_000)
            await browser.close()
    finally:
        stop_bullpen(server)
    log = server.log.read_text()
    assert "Traceback" not in log, log[-4000:]


async def _waiting_reaches(socket: Any, wanted: dict[str, int], within: float) -> None:
    seen: dict[str, int] = {}
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            raw = await asyncio.wait_for(socket.recv(), deadline - time.monotonic())
        except TimeoutError:
            break
        message = json.loads(raw)
        parts = message["messages"] if message.get("type") == "batch" else [message]
        for part in parts:
            if part.get("type") == "counts":
                for entry in part["queues"]:
                    seen[entry["slug"]] = int(entry.get("counts", {}).get("waiting", 0))
        if all(seen.get(queue) == n for queue, n in wanted.items()):
            return
    raise AssertionError(f"waiting counts {seen}, wanted {wanted}")


@pytest.mark.django_db(transaction=True)
async def test_the_worker_runner_works_a_queue_whose_prefix_is_a_hash_tag(
    cluster_topology: ClusterTopology, on_cluster: dict[str, Any], tmp_path: Path
) -> None:
    queue = "proc-deliver"  # keys {bull}:proc-deliver:*, all in one slot
    lines = tmp_path / "deliveries.txt"
    with override_settings(BULLPEN={**on_cluster, "PREFIXES": [TAGGED]}):
        async with Producer(default_registry) as producer:
            ids = [
                await producer.add(queue, "post", {"lines": str(lines), "sleep": 0.1})
                for _ in range(6)
            ]
    worker = WorkerProcess(
        cluster_topology.url, tmp_path / "worker.log", queue, env={"BULLPEN_TEST_PREFIX": TAGGED}
    )
    client = cluster_topology.client()
    try:
        await worker.wait_started()

        async def all_completed() -> bool:
            return int(client.zcard(f"{TAGGED}:{queue}:completed")) == len(ids)

        await wait_for("every job completed", all_completed, limit_s=30)
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0
    finally:
        worker.stop()
        client.close()
    assert sorted(set(lines_of(lines, "delivered"))) == sorted(ids)


@pytest.mark.django_db(transaction=True)
async def test_deduplication_keys_are_listed_and_released_on_the_master_holding_the_queue(
    client: AsyncClient,
    cluster_topology: ClusterTopology,
    cluster_peer: ClusterPeer,
    on_cluster: dict[str, Any],
) -> None:
    queue = TENANTS[2]
    opts = json.dumps({"deduplication": {"id": "acct-7", "ttl": 600_000}})
    held = await asyncio.to_thread(
        cluster_peer, "add", "--queue", queue, "--name", "s", "--opts", opts
    )
    listed = (await client.get(f"/queues/api/queues/{queue}/deduplication/")).json()
    assert [(k["id"], k["jobId"], k["jobState"]) for k in listed["keys"]] == [
        ("acct-7", held["id"], "waiting")
    ]
    released = await client.post(
        f"/queues/api/queues/{queue}/deduplication/acct-7/release/", headers=AUTH
    )
    assert released.status_code == 200, released.content[:300]
    again = await asyncio.to_thread(
        cluster_peer, "add", "--queue", queue, "--name", "s", "--opts", opts
    )
    assert again["id"] != held["id"]


@pytest.mark.django_db(transaction=True)
async def test_a_stuck_job_on_a_cluster_is_flagged_counted_and_given_back(
    client: AsyncClient, cluster_peer: ClusterPeer, on_cluster: dict[str, Any]
) -> None:
    queue = TENANTS[2]
    found = await asyncio.to_thread(cluster_peer, "strand", "--queue", queue, "--name", "w")
    job_id = str(found["ids"][0])
    job = (await client.get(f"/queues/api/queues/{queue}/jobs/{job_id}/")).json()
    assert (job["state"], job["stuck"]) == ("active", True)
    rows = (await client.get(f"/queues/api/queues/{queue}/jobs/?state=active")).json()["jobs"]
    assert [row["stuck"] for row in rows] == [True]
    # The count's script reads the locks beside the active list, in the queue's slot.
    problems = (await client.get("/queues/api/queues/?problems=1")).json()["queues"]
    assert {q["name"]: q.get("stuck") for q in problems} == {queue: 1}
    moved = await client.post(
        f"/queues/api/queues/{queue}/jobs/{job_id}/move-to-wait/", headers=AUTH
    )
    assert moved.status_code == 200, moved.content[:300]
    status = await asyncio.to_thread(cluster_peer, "job-status", "--queue", queue, "--id", job_id)
    assert status["state"] == "waiting"


@pytest.mark.django_db(transaction=True)
async def test_a_queues_hygiene_is_read_on_the_master_holding_it(
    client: AsyncClient,
    cluster_topology: ClusterTopology,
    cluster_peer: ClusterPeer,
    on_cluster: dict[str, Any],
) -> None:
    queue = TENANTS[3]
    await asyncio.to_thread(
        cluster_peer, "add-bulk", "--queue", queue, "--name", "h", "--count", "300",
        "--max-len-events", "20",
    )  # fmt: skip
    body = (await client.get(f"/queues/api/queues/{queue}/info/", headers=AUTH)).json()
    length = cluster_topology.client().xlen(f"bull:{queue}:events")  # type: ignore[no-untyped-call]
    assert (body["meta"]["maxLenEvents"], body["eventsLength"]) == (20, length)
    assert [w["code"] for w in body["warnings"]] == ["events-at-cap"]
    assert body["legacyRepeatables"] == 0  # the repeat set's script ran in the queue's slot
