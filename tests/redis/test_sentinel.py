"""Bullpen on a Sentinel-watched master (``redis+sentinel://``): a real master, replica and
sentinel; Node BullMQ writes through the sentinel too. Pages, the API and actions reach the
master of the moment; after a failover they resume through the new master without a restart,
and an action cut off by it fails with a 503 and is not half-done."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import AsyncClient, override_settings
from playwright.async_api import expect

from dashboard.checks import redis_reachable
from queues.redis.write_once import CLIENT_NAME
from queues.runner import Producer, default_registry
from tests.support.browser import chromium
from tests.support.paths import ROOT
from tests.support.peer import Peer
from tests.support.servers.live_server import start_bullpen, stop_bullpen
from tests.support.servers.sentinel_topology import SERVICE, SentinelTopology
from tests.support.worker_fixtures import WorkerProcess, lines_of, wait_for

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


class SentinelPeer(Peer):
    """The Node BullMQ peer, connected through the sentinel (ioredis ``sentinels``/``name``)."""

    def __init__(self, topology: SentinelTopology) -> None:
        super().__init__("")
        self.topology = topology

    def connection_flags(self) -> list[str]:
        return ["--sentinels", self.topology.sentinels, "--sentinel-name", SERVICE]


@pytest.fixture
def sentinel_peer(sentinel_topology: SentinelTopology) -> SentinelPeer:
    if not (ROOT / "tests" / "interop" / "node_modules" / "bullmq").exists():
        pytest.fail("Node peer not installed: run ./run test (it runs npm ci in tests/interop)")
    return SentinelPeer(sentinel_topology)


@pytest.fixture
def through_sentinel(
    sentinel_topology: SentinelTopology, bullpen_settings: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    config = {**bullpen_settings, "REDIS_URL": sentinel_topology.url}
    with override_settings(BULLPEN=config):
        yield config


def _http(url: str, form: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """GET ``url``, or POST ``form`` to it, as the operator."""
    data = None if form is None else urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(url, headers=AUTH, data=data)  # noqa: S310 - test server
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - test server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _waiting_in(listed: dict[str, Any], queue: str) -> int:
    counts = {q["name"]: q["counts"] for q in listed["queues"]}
    return int(counts.get(queue, {}).get("waiting", 0))


@pytest.mark.django_db
async def test_pages_api_and_actions_reach_the_master_through_the_sentinel(
    client: AsyncClient,
    sentinel_topology: SentinelTopology,
    sentinel_peer: SentinelPeer,
    through_sentinel: dict[str, Any],
) -> None:
    await asyncio.to_thread(
        sentinel_peer, "add-bulk", "--queue", "mail", "--name", "w", "--count", "3"
    )

    listed = (await client.get("/queues/api/queues/")).json()["queues"]
    assert {q["name"]: q["counts"]["waiting"] for q in listed} == {"mail": 3}
    page = await client.get("/queues/q/mail/")
    assert page.status_code == 200 and b"mail" in page.content
    assert (await client.get("/queues/")).status_code == 200

    # An action goes to the master: its change is on the master and replicated.
    response = await client.post("/queues/api/queues/mail/pause/", headers=AUTH)
    assert response.status_code == 200, response.content[:300]
    with sentinel_topology.master() as master:
        assert master.hget("bull:mail:meta", "paused") == "1"
        # The action's connection was opened to the master the sentinel names.
        assert CLIENT_NAME in {c["name"] for c in master.client_list()}

    # manage.py check --deploy reaches the master through the sentinel too.
    assert redis_reachable.check_redis() == []


async def test_check_deploy_says_when_the_sentinel_knows_no_such_service(
    sentinel_topology: SentinelTopology, bullpen_settings: dict[str, Any]
) -> None:
    url = f"redis+sentinel://127.0.0.1:{sentinel_topology.sentinel_port}/no-such-service"
    with override_settings(BULLPEN={**bullpen_settings, "REDIS_URL": url}):
        (message,) = redis_reachable.check_redis()
    assert message.id == "bullpen.W009"
    assert "No master found for 'no-such-service'" in message.msg


@pytest.mark.browser
async def test_failover_during_an_action_and_with_a_page_open(
    sentinel_topology: SentinelTopology,
    sentinel_peer: SentinelPeer,
    chromium_path: str,
    tmp_path: Path,
) -> None:
    await asyncio.to_thread(
        sentinel_peer, "add-bulk", "--queue", "mail", "--name", "w", "--count", "2"
    )
    await asyncio.to_thread(sentinel_topology.replicated)
    server = start_bullpen(sentinel_topology.url, tmp_path / "daphne.log")
    try:
        async with chromium(chromium_path) as browser:
            page = await browser.new_page(viewport={"width": 1300, "height": 800})
            await page.goto(server.url + "/queues/q/mail/")
            await expect(page.locator("#live-status")).to_have_text("live")
            await page.evaluate("window.bullpenNoReload = true")
            waiting = page.locator('.tab[data-state="waiting"] .count')
            await expect(waiting).to_have_text("2")

            # An action in flight when the master goes: its write is held (writes paused), then
            # the master dies before answering.
            master = sentinel_topology.master()
            master.client_pause(10_000, all=False)

            async def write_held() -> bool:
                return any(
                    c["name"] == CLIENT_NAME and "evalsha" in c["cmd"] for c in master.client_list()
                )

            action = asyncio.ensure_future(
                asyncio.to_thread(
                    _http, f"{server.url}/queues/api/queues/mail/add/", {"name": "late"}
                )
            )
            await wait_for("the add to be sent", write_held, limit_s=10)
            master.close()
            promoted = sentinel_topology.kill_master()
            status, body = await action
            # Sent and cut off: Redis may or may not have run it, and the answer says so.
            assert status == 503, body
            assert body["error"].startswith("The outcome of add is unknown: "), body

            await asyncio.to_thread(sentinel_topology.wait_for_master, promoted)

            # Within 10 s of the promotion: the API answers from the new master, where the
            # cut-off add is not (nothing half-done, nothing sent twice).
            answers: list[tuple[int, str]] = []

            async def api_answers() -> bool:
                status, body = await asyncio.to_thread(_http, f"{server.url}/queues/api/queues/")
                answers.append((status, json.dumps(body)[:300]))
                return status == 200 and _waiting_in(body, "mail") == 2

            def seen() -> str:
                log = server.log.read_text()[-1500:]
                return (
                    f"answers {answers[:1]} ... {answers[-1:]}; "
                    f"{sentinel_topology.describe()}; the server's log: {log}"
                )

            await wait_for(
                "the API to answer from the new master", api_answers, limit_s=10, seen=seen
            )
            with sentinel_topology.master() as new_master:
                assert new_master.llen("bull:mail:wait") == 2

            # The open page's live updates flow again: a job Node adds through the sentinel
            # shows up without a reload.
            await asyncio.to_thread(sentinel_peer, "add", "--queue", "mail", "--name", "after")
            await expect(waiting).to_have_text("3", timeout=10_000)
            await expect(page.locator("#live-status")).to_have_text("live")
            assert await page.evaluate("window.bullpenNoReload === true")
            await browser.close()
    finally:
        stop_bullpen(server)


async def test_the_worker_runner_loses_no_job_across_a_failover(
    sentinel_topology: SentinelTopology, through_sentinel: dict[str, Any], tmp_path: Path
) -> None:
    queue = (
        "proc-deliver"  # 10 s locks, stall checks every second (tests/support/worker_fixtures.py)
    )
    lines = tmp_path / "deliveries.txt"
    async with Producer(default_registry) as producer:
        ids = [
            await producer.add(queue, "post", {"lines": str(lines), "sleep": 1.0, "log": n % 2})
            for n in range(10)
        ]
    await asyncio.to_thread(sentinel_topology.replicated)
    worker = WorkerProcess(sentinel_topology.url, tmp_path / "worker.log", queue)
    check = None
    try:
        await worker.wait_started()

        async def some_running() -> bool:
            return len(lines_of(lines, "started")) >= 3

        await wait_for("handlers running", some_running)
        promoted = await asyncio.to_thread(sentinel_topology.shut_master_down)
        await asyncio.to_thread(sentinel_topology.wait_for_master, promoted)
        check = sentinel_topology.master()

        async def all_completed() -> bool:
            assert check is not None
            return int(check.zcard(f"bull:{queue}:completed")) == len(ids)

        await wait_for("every job completed on the new master", all_completed, limit_s=30)
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0
    finally:
        worker.stop()
        if check is not None:
            check.close()
    delivered = Counter(lines_of(lines, "delivered"))
    assert sorted(set(delivered)) == sorted(ids)  # at least once each: none lost
