"""Bullpen as a Redis user without CLIENT, CONFIG and INFO, as hosted Redis services give
(``ACL SETUSER limited ... -client -config -info``): every page, API read and action works; the
workers list, which needs ``CLIENT LIST``, says why it is empty instead of failing."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.test import AsyncClient, override_settings

from tests.support.peer import Peer
from tests.support.worker_fixtures import WorkerProcess, wait_for

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
NOTE = "The Redis user Bullpen connects as may not list clients"


@pytest.fixture
def as_restricted_user(
    restricted_redis_url: str, bullpen_settings: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    config = {**bullpen_settings, "REDIS_URL": restricted_redis_url, "METRICS_TOKEN": "t0ken"}
    with override_settings(BULLPEN=config):
        yield config


def test_the_user_is_refused_the_admin_commands(restricted_redis_url: str) -> None:
    # Without this, the tests below would prove nothing.
    with redis.Redis.from_url(restricted_redis_url) as limited:
        assert limited.ping()
        for command in (("CLIENT", "LIST"), ("INFO",), ("CONFIG", "GET", "maxmemory")):
            with pytest.raises(redis.exceptions.NoPermissionError):
                limited.execute_command(*command)


@pytest.mark.django_db
async def test_pages_and_reads_work_without_admin_commands(
    client: AsyncClient, peer: Peer, as_restricted_user: dict[str, Any]
) -> None:
    ids = peer("scenario", "--queue", "shop")["ids"]
    failed = ids["failed"][0]
    for path in (
        "/queues/",
        "/queues/q/shop/",
        "/queues/q/shop/?state=failed",
        f"/queues/q/shop/jobs/{failed}/",
        "/queues/api/queues/",
        "/queues/api/queues/shop/jobs/?state=failed",
        f"/queues/api/queues/shop/jobs/{failed}/",
        "/queues/api/queues/shop/failure-groups/",
        f"/queues/find/?id={failed}",
    ):
        response = await client.get(path)
        assert response.status_code == 200, (path, response.content[:300])

    # The workers list cannot be read: a note says why, where the list would be.
    fragment = await client.get("/queues/q/shop/workers/")
    assert fragment.status_code == 200
    assert NOTE in fragment.content.decode()
    assert b"No worker is connected" not in fragment.content
    api = (await client.get("/queues/api/queues/shop/workers/")).json()
    assert api["workers"] == [] and api["processes"] == []
    assert api["listed"] is False and NOTE in api["note"]

    # Metrics: Redis is up, the queues are there; the workers gauge is left out.
    scrape = await client.get("/queues/metrics", headers={"Authorization": "Bearer t0ken"})
    text = scrape.content.decode()
    assert scrape.status_code == 200
    assert "bullpen_redis_up 1.0" in text and 'queue="shop"' in text
    assert "bullpen_workers" not in text


@pytest.mark.django_db
async def test_actions_work_without_admin_commands(
    client: AsyncClient, peer: Peer, redis_client: Any, as_restricted_user: dict[str, Any]
) -> None:
    ids = peer("scenario", "--queue", "shop")["ids"]
    failed = ids["failed"][0]
    for path, data in (
        (f"queues/shop/jobs/{failed}/retry/", {}),
        ("queues/shop/add/", {"name": "late"}),
        ("queues/shop/pause/", {}),
    ):
        response = await client.post(f"/queues/api/{path}", data, headers=AUTH)
        assert response.status_code == 200, (path, response.content[:300])
    assert redis_client.hget("bull:shop:meta", "paused") == "1"
    assert redis_client.lpos("bull:shop:wait", failed) is not None


async def test_the_worker_runner_works_without_admin_commands(
    restricted_redis_url: str, bullpen_settings: dict[str, Any], redis_client: Any, tmp_path: Path
) -> None:
    from queues.runner import Producer, default_registry

    queue = "proc-deliver"
    lines = tmp_path / "deliveries.txt"
    with override_settings(BULLPEN={**bullpen_settings, "REDIS_URL": restricted_redis_url}):
        async with Producer(default_registry) as producer:
            ids = [
                await producer.add(queue, "post", {"lines": str(lines), "sleep": 0.05})
                for _ in range(3)
            ]
    worker = WorkerProcess(restricted_redis_url, tmp_path / "worker.log", queue)
    try:
        await worker.wait_started()

        async def all_completed() -> bool:
            return int(redis_client.zcard(f"bull:{queue}:completed")) == len(ids)

        await wait_for("every job completed", all_completed, limit_s=20)
    finally:
        worker.stop()
