"""Hostile text and depth through every decoder: text cut inside an emoji (a lone surrogate, as
Node writes it) in a job's name and data, a scheduler template nested deeper than a page
shows, and operator input thousands of levels deep. Every page, list, API and search answers;
what cannot be read is said, and an operator's refused input is audited."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from bullmq import Queue
from django.test import AsyncClient

from dashboard.models import AuditEntry
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)
AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


@pytest.fixture
def cut(peer: Peer) -> dict[str, Any]:
    peer("add", "--queue", "calm", "--name", "greet calm", "--data", "{}")
    found: dict[str, Any] = peer("add-cut-emoji", "--queue", "party")
    return found


def _lines(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.decode().splitlines() if line.strip()]


async def _streamed(response: Any) -> bytes:
    return b"".join([chunk async for chunk in response.streaming_content])


async def test_a_lone_surrogate_answers_everywhere(
    client: AsyncClient, cut: dict[str, Any]
) -> None:
    (job_id,) = cut["ids"]
    assert (await client.get("/queues/")).status_code == 200
    for path in (
        "/queues/q/party/",
        f"/queues/q/party/jobs/{job_id}/",
    ):
        response = await client.get(path)
        assert response.status_code == 200, path
        assert "party \ufffd" in response.content.decode(), path
    for path in (
        "/queues/api/queues/party/jobs/?state=waiting",
        f"/queues/api/queues/party/jobs/{job_id}/",
    ):
        response = await client.get(path)
        assert response.status_code == 200, path
        assert "party \ufffd" in json.dumps(response.json(), ensure_ascii=False), path


async def test_a_lone_surrogate_does_not_stop_a_search(
    client: AsyncClient, cut: dict[str, Any]
) -> None:
    one = await client.get("/queues/api/queues/party/search/?state=waiting&q=party&render=row")
    lines = _lines(await _streamed(one))
    assert [line for line in lines if line["type"] == "error"] == []
    assert lines[-1]["type"] == "progress" and lines[-1]["done"]
    every = await client.get("/queues/api/search/?q=greet&render=html")
    lines = _lines(await _streamed(every))
    assert [line for line in lines if line["type"] == "error"] == []
    assert {line["queue"] for line in lines if line["type"] == "queue"} == {"party", "calm"}


async def test_a_deep_scheduler_template_is_shown_raw(
    client: AsyncClient, redis_server: RedisServer
) -> None:
    deep: Any = "bottom"
    for _ in range(600):
        deep = [deep]
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    queue = Queue("reports", {"connection": connection})
    try:
        await queue.upsertJobScheduler("deep", {"every": 3_600_000}, "report", deep, {})
    finally:
        await queue.close()
        await connection.aclose()
    listed = await client.get("/queues/api/queues/reports/schedulers/")
    assert listed.status_code == 200
    (scheduler,) = listed.json()["schedulers"]
    assert isinstance(scheduler["template"]["data"], str)  # the stored text, not a value
    page = await client.get("/queues/q/reports/schedulers/")
    assert page.status_code == 200 and 'data-scheduler-id="deep"' in page.content.decode()


async def test_operator_input_thousands_deep_is_refused_and_audited(
    client: AsyncClient, peer: Peer
) -> None:
    added = peer("add", "--queue", "edit", "--name", "x", "--data", "{}")
    deep = "[" * 5000 + "]" * 5000
    form = await client.post(
        "/queues/api/queues/edit/add/", {"name": "x", "data": deep}, headers=AUTH
    )
    assert form.status_code == 400
    assert "nested deeper than 200 levels" in form.json()["error"]
    body = await client.post(
        f"/queues/api/queues/edit/jobs/{added['id']}/data/",
        '{"data": ' + deep + "}",
        content_type="application/json",
        headers=AUTH,
    )
    assert body.status_code == 400
    assert "nested deeper than 200 levels" in body.json()["error"]
    entries = await sync_to_async(list)(
        AuditEntry.objects.filter(queue="edit").values_list("action", "status")
    )
    assert sorted(entries) == [("add", 400), ("update-data", 400)]


async def test_a_deep_query_value_ends_its_search(client: AsyncClient, peer: Peer) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "n", "--count", "50", "--data", '{"a": 1}')
    deep = "[" * 990 + "]" * 990  # 2 KB, within the longest query
    response = await asyncio.wait_for(
        client.get(
            "/queues/api/queues/mail/search/", {"state": "waiting", "q": f"data.a = {deep}"}
        ),
        30,
    )
    lines = _lines(await asyncio.wait_for(_streamed(response), 30))
    assert [line for line in lines if line["type"] == "error"] == []
    assert lines[-1]["type"] == "progress" and lines[-1]["done"] and lines[-1]["scanned"] == 50
    assert lines[-1]["matched"] == 0
