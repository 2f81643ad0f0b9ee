"""Job schedulers on the dashboard, and dead-letter replay's guard."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import redis.asyncio as aioredis
from bullmq import Queue
from django.test import AsyncClient

from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)
AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


async def test_schedulers_listed_and_removed(
    client: AsyncClient, redis_server: RedisServer, redis_client: Any
) -> None:
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    queue = Queue("reports", {"connection": connection})
    try:
        await queue.upsertJobScheduler(
            "nightly-report",
            {"pattern": "0 2 * * *", "tz": "Europe/Paris"},
            "report",
            {"kind": "daily"},
            {},
        )
    finally:
        await queue.close()
        await connection.aclose()
    body = (await client.get("/queues/api/queues/reports/schedulers/")).json()
    (scheduler,) = body["schedulers"]
    assert scheduler["id"] == "nightly-report" and scheduler["tz"] == "Europe/Paris"
    assert scheduler["pattern"] == "0 2 * * *"
    html = (await client.get("/queues/q/reports/schedulers/")).content.decode()
    assert "nightly-report" in html and "Europe/Paris" in html
    removed = await client.post(
        "/queues/api/queues/reports/schedulers/nightly-report/remove/", headers=AUTH
    )
    assert removed.status_code == 200
    assert (await client.get("/queues/api/queues/reports/schedulers/")).json()["schedulers"] == []


async def test_replay_only_from_the_dead_letter_queue(client: AsyncClient, peer: Peer) -> None:
    job = peer("add", "--queue", "mail", "--name", "n", "--data", "{}")
    response = await client.post(f"/queues/api/queues/mail/jobs/{job['id']}/replay/", headers=AUTH)
    assert response.status_code == 400
    assert "dead-letter" in response.json()["error"]
