"""What one alert evaluation pass costs Redis beside a view of the overview: every rule on,
over many queues written by real Node BullMQ, one of them with a job scheduler."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from bullmq import Queue
from django.test import AsyncClient, override_settings

from queues.alerts import schedulers
from queues.alerts.state import Notice
from queues.alerts.watch import AlertWatch, DeliverySettings
from tests.support.live_reads import calls, grown
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

RULES = {
    "failure_rate_percent": 10,
    "run_p95_ms": 2000,
    "wait_p95_ms": 60_000,
    "oldest_waiting_seconds": 0,
    "no_workers_seconds": 300,
    "stalled_last_hour": 10,
    "scheduler_overdue_seconds": 0,
}


async def nowhere(notice: Notice, targets: frozenset[str], later: bool) -> frozenset[str]:
    return frozenset()


async def add_scheduler(url: str, queue_name: str) -> None:
    """A job scheduler due at once, that no worker takes."""
    connection = aioredis.Redis.from_url(url, decode_responses=True)
    queue = Queue(queue_name, {"connection": connection})
    try:
        await queue.upsertJobScheduler("report", {"every": 3_600_000}, "report", {}, {})
    finally:
        await queue.close()
        await connection.aclose()


async def test_one_evaluation_pass_costs_redis_no_more_than_a_view_of_the_overview(
    peer: Peer,
    client: AsyncClient,
    redis_client: Any,
    redis_server: RedisServer,
    bullpen_settings: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 60 tenant queues, a few jobs waiting in most; a scheduler on one more.
    await asyncio.to_thread(
        peer, "many-queues", "--count", "30", "--services", "mail,billing", timeout=180
    )
    await add_scheduler(redis_server.url, "nightly")
    # Batches of 8 repeat sets: the one holding nightly's is read queue by queue, no other.
    monkeypatch.setattr(schedulers, "EXISTS_KEYS", 8)
    config = {**bullpen_settings, "DISCOVERY_INTERVAL": 30, "ALERTS": RULES}
    watch = AlertWatch(nowhere, lambda: True)
    delivery = DeliverySettings(webhooks=("http://127.0.0.1:9/nowhere",))
    with override_settings(BULLPEN=config):
        await client.get("/queues/")
        before = calls(redis_client)
        page = await client.get("/queues/")
        overview = grown(before, calls(redis_client))
        first = await watch.evaluate(delivery)
        before = calls(redis_client)
        again = await watch.evaluate(delivery)
        cost = grown(before, calls(redis_client))
    assert page.status_code == 200
    fired = {(n.queue, n.alert.rule) for n in first}
    assert {q for q, rule in fired if rule == "scheduler_overdue_seconds"} == {"nightly"}
    assert ("t001-mail", "oldest_waiting_seconds") in fired and again == []
    spent, seen = sum(cost.values()), sum(overview.values())
    print(f"61 queues: a pass {spent} Redis commands, a view of the overview {seen}: {cost}")
    assert cost["exists"] == 8  # 61 queues' repeat sets, 8 at a time
    assert 1 <= cost["zrange"] <= 8
    assert "zcard" in cost and cost["zcard"] <= 2 * 61  # delayed and failed, no other zset
    assert spent <= seen, (cost, overview)
