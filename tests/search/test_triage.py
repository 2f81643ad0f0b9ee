"""Triage: find a job by id, failure groups, workers of both libraries, alerts, /metrics."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
import redis.asyncio as aioredis
from bullmq import Worker
from django.test import AsyncClient, override_settings
from prometheus_client.parser import text_string_to_metric_families

from queues.failures.failure_groups import forget_shared
from tests.support.action_waits import accepted, finished
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


@pytest.fixture
def scenario(peer: Peer) -> dict[str, Any]:
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")
    return ids


async def test_find_a_job_by_id_anywhere(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any]
) -> None:
    body = (await client.get("/queues/api/find/?id=order-42")).json()
    assert body["matches"] == [{"queue": "shop", "url": "/queues/q/shop/jobs/order-42/"}]
    page = await client.get("/queues/find/?id=order-42")
    assert page.status_code == 302 and page["Location"] == "/queues/q/shop/jobs/order-42/"
    # Job "1" exists in two queues: the page lists both.
    many = await client.get("/queues/find/?id=1")
    html = many.content.decode()
    assert many.status_code == 200
    assert (
        'href="/queues/q/shop/jobs/1/"' in html and 'href="/queues/q/shop-paused/jobs/1/"' in html
    )
    none = await client.get("/queues/find/?id=meta")
    assert 'data-testid="find-none"' in none.content.decode()


async def test_failure_groups_for_mixed_errors(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    errors = (
        ["timeout after 3000 ms"] * 3
        + ["connection refused to 10.0.0.5:5432"] * 2
        + [
            "user 42 not found",
            "user 77 not found",
            "user 1001 not found",
            "user 9 not found",
        ]
    )
    for index, message in enumerate(errors):
        await asyncio.to_thread(
            peer,
            "add",
            "--queue",
            "mail",
            "--name",
            f"n{index}",
            "--data",
            json.dumps({"error": message}),
        )
    await asyncio.to_thread(
        peer, "work", "--queue", "mail", "--count", str(len(errors)), "--fail", "--concurrency", "3"
    )
    body = (await client.get("/queues/api/queues/mail/failure-groups/")).json()
    counts = {g["reason"]: g["count"] for g in body["groups"]}
    assert counts == {
        "user <n> not found": 4,
        "timeout after <n> ms": 3,
        "connection refused to <ip>:<n>": 2,
    }
    assert body["complete"] and body["scanned"] == len(errors)
    biggest = body["groups"][0]
    assert biggest["firstSeen"] <= biggest["lastSeen"]
    assert redis_client.hget(f"bull:mail:{biggest['exampleId']}", "failedReason").endswith(
        "not found"
    )
    # A caller's own budget scans that many; a budget that is not a number is refused.
    small = (await client.get("/queues/api/queues/mail/failure-groups/?budget=4")).json()
    assert small["scanned"] == 4 and not small["complete"]
    refused = await client.get("/queues/api/queues/mail/failure-groups/?budget=many")
    assert refused.status_code == 400 and "budget" in refused.json()["error"]
    page = (await client.get("/queues/q/mail/groups/", headers=AUTH)).content.decode()
    assert page.count('data-testid="retry-group"') == 3
    # Signed-out visitors read the groups but get no buttons.
    anonymous = (await client.get("/queues/q/mail/groups/")).content.decode()
    assert "timeout after &lt;n&gt; ms" in anonymous and "hx-post" not in anonymous

    retried = await client.post(
        "/queues/api/queues/mail/failure-groups/retry/",
        {"signature": biggest["signature"]},
        headers=AUTH,
    )
    status = await finished(client, accepted(retried))
    assert (status["state"], status["count"], status["text"]) == ("done", 4, "4 jobs retried")
    assert redis_client.zcard("bull:mail:failed") == 5
    assert redis_client.llen("bull:mail:wait") == 4
    # The action forgot the shared report: the page shows the groups that are left.
    after = (await client.get("/queues/api/queues/mail/failure-groups/")).json()
    assert {g["reason"] for g in after["groups"]} == {
        "timeout after <n> ms",
        "connection refused to <ip>:<n>",
    }

    # Twenty pages asking at once (a failure just arrived) cost one scan of the failed set.
    def scans() -> int:
        stats = redis_client.info("commandstats").get("cmdstat_zrevrange", {})
        return int(stats.get("calls", 0))

    forget_shared("mail")
    before = scans()
    pages = await asyncio.gather(*(client.get("/queues/q/mail/groups/") for _ in range(20)))
    assert all(p.status_code == 200 for p in pages)
    assert scans() - before == 1


async def test_workers_of_both_libraries(
    client: AsyncClient, peer: Peer, redis_server: RedisServer
) -> None:
    # A delayed job makes the queue exist while both workers wait, idle.
    await asyncio.to_thread(
        peer,
        "add",
        "--queue",
        "jobs",
        "--name",
        "later",
        "--data",
        "{}",
        "--opts",
        '{"delay": 3600000}',
    )
    node = asyncio.create_task(
        asyncio.to_thread(peer, "work", "--queue", "jobs", "--count", "1", "--timeout-ms", "20000")
    )
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    python = Worker(
        "jobs", lambda job, token: asyncio.sleep(0), {"connection": connection, "name": "py-1"}
    )
    try:
        for _ in range(50):
            body = (await client.get("/queues/api/queues/jobs/workers/")).json()
            workers = body["workers"]
            if {w["library"] for w in workers} == {"node", "python"}:
                break
            await asyncio.sleep(0.2)
        assert {w["library"] for w in workers} == {"node", "python"}
        assert any(w["name"] == "py-1" for w in workers)
        assert all(w["addr"].startswith("127.0.0.1:") for w in workers)
        # One process per worker, however many connections carry its name.
        processes = {p["library"]: p for p in body["processes"]}
        assert len(body["processes"]) == 2 and processes["python"]["name"] == "py-1"
        for library, process in processes.items():
            mine = [w for w in workers if w["library"] == library]
            assert process["connections"] == len(mine) and process["host"] == "127.0.0.1"
        html = (await client.get("/queues/q/jobs/workers/")).content.decode()
        assert "node" in html and "python" in html
    finally:
        await python.close()
        await connection.aclose()
        await asyncio.to_thread(peer, "add", "--queue", "jobs", "--name", "m", "--data", "{}")
        await node


async def test_alerts_and_metrics(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    for index in range(3):
        await asyncio.to_thread(
            peer, "add", "--queue", "busy", "--name", f"n{index}", "--data", "{}"
        )
    config = {**bullpen_settings, "ALERTS": {"waiting": 2}, "METRICS_TOKEN": "t0ken"}
    with override_settings(BULLPEN=config):
        alerts = (await client.get("/queues/api/alerts/")).json()["alerts"]
        assert alerts["busy"] == [{"rule": "waiting", "value": 3, "threshold": 2}]
        overview = (await client.get("/queues/")).content.decode()
        assert 'class="alerting"' in overview and 'data-rule="waiting"' in overview
        assert (await client.get("/queues/metrics")).status_code == 401
        wrong = await client.get("/queues/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        scrape = await client.get("/queues/metrics", headers={"Authorization": "Bearer t0ken"})
        assert scrape.status_code == 200
        families = {f.name: f for f in text_string_to_metric_families(scrape.content.decode())}
        jobs = {
            (s.labels["queue"], s.labels["state"]): s.value
            for s in families["bullpen_queue_jobs"].samples
        }
        assert jobs[("busy", "waiting")] == 3
        firing = {
            (s.labels["queue"], s.labels["rule"]): s.value
            for s in families["bullpen_alert"].samples
        }
        assert firing[("busy", "waiting")] == 1 and firing[("busy", "delayed")] == 0
        assert families["bullpen_redis_up"].samples[0].value == 1
        # Durations of completed jobs, where BullMQ still keeps them.
        await asyncio.to_thread(peer, "work", "--queue", "busy", "--count", "3")
        scrape = await client.get("/queues/metrics", headers={"Authorization": "Bearer t0ken"})
        families = {f.name: f for f in text_string_to_metric_families(scrape.content.decode())}
        count = next(
            s.value
            for s in families["bullpen_job_duration_seconds"].samples
            if s.name.endswith("_count") and s.labels["queue"] == "busy"
        )
        assert count == 3
    with override_settings(BULLPEN={**bullpen_settings, "METRICS_TOKEN": ""}):
        assert (await client.get("/queues/metrics")).status_code == 404
