"""Bad requests get a clear JSON error with the right status; Redis going away is a 503."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from tests.conftest import Peer
from tests.redis_server import free_port


@pytest.fixture
def queue(peer: Peer) -> str:
    peer("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    return "mail"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("state=nope", "Unknown state"),
        ("state=waiting&per_page=5", "per_page must be between 10 and 300"),
        ("state=waiting&per_page=301", "per_page must be between 10 and 300"),
        ("state=waiting&page=0", "page must be 1 or more"),
        ("state=waiting&page=abc", "page must be a whole number"),
        ("state=waiting&order=sideways", "order must be"),
    ],
)
async def test_bad_parameters_are_400(
    client: AsyncClient, queue: str, query: str, message: str
) -> None:
    response = await client.get(f"/queues/api/queues/{queue}/jobs/?{query}")
    assert response.status_code == 400
    assert message in response.json()["error"]


async def test_bad_parameters_on_pages_are_400(client: AsyncClient, queue: str) -> None:
    response = await client.get(f"/queues/q/{queue}/?state=nope")
    assert response.status_code == 400
    assert "Unknown state" in response.content.decode()


async def test_unknown_queue_and_job_are_404(client: AsyncClient, queue: str) -> None:
    for path in ("/queues/api/queues/nope/jobs/", "/queues/api/queues/nope/jobs/1/"):
        response = await client.get(path)
        assert response.status_code == 404
        assert "Unknown queue" in response.json()["error"]
    response = await client.get(f"/queues/api/queues/{queue}/jobs/999/")
    assert response.status_code == 404
    assert "No job '999'" in response.json()["error"]
    assert (await client.get("/queues/q/nope/")).status_code == 404
    assert (await client.get(f"/queues/q/{queue}/jobs/999/")).status_code == 404


async def test_writes_to_read_routes_are_405(client: AsyncClient, queue: str) -> None:
    for path in ("/queues/api/queues/", f"/queues/api/queues/{queue}/jobs/"):
        response = await client.post(path)
        assert response.status_code == 405
        assert response["Allow"] == "GET, HEAD"


async def test_redis_unreachable_is_503(
    client: AsyncClient, bullpen_settings: dict[str, Any]
) -> None:
    dead = {
        **bullpen_settings,
        "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "REDIS_TIMEOUT": 1,
    }
    with override_settings(BULLPEN=dead):
        for path in (
            "/queues/api/queues/",
            "/queues/api/queues/mail/jobs/",
            "/queues/api/queues/mail/jobs/1/",
        ):
            response = await client.get(path)
            assert response.status_code == 503, path
            assert "Redis is unreachable" in response.json()["error"]
        page = await client.get("/queues/")
        assert page.status_code == 503
        assert "Redis is unreachable" in page.content.decode()


async def test_new_queue_is_found_between_scans(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "DISCOVERY_INTERVAL": 3600}):
        assert (await client.get("/queues/api/queues/")).json()["queues"] == []
        peer("add", "--queue", "late", "--name", "n", "--data", "{}")
        # The cached overview list lags, but the queue's own pages work at once.
        response = await client.get("/queues/api/queues/late/jobs/")
        assert response.status_code == 200 and response.json()["total"] == 1
