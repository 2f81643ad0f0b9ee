"""Once reads need credentials, no answer is kept by a cache: a shared proxy, or the browser
of the next person at the machine after *Sign out*."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


@pytest.fixture
def closed_reads(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    # The default read check: staff with bullpen.view and basic-auth users.
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    with override_settings(BULLPEN={**config, "METRICS_TOKEN": "scrape-me"}):
        yield


async def test_answers_to_signed_in_reads_are_not_stored(
    client: AsyncClient, peer: Peer, closed_reads: None
) -> None:
    job = peer("add", "--queue", "mail", "--name", "hello")["id"]
    for path in (
        "/queues/",
        "/queues/q/mail/",
        f"/queues/q/mail/jobs/{job}/",
        "/queues/api/queues/",
        "/queues/api/queues/mail/jobs/",
        f"/queues/api/queues/mail/jobs/{job}/",
        "/queues/api/queues/mail/schedulers/",
        "/queues/audit/",
        "/queues/search/?q=hello",
    ):
        response = await client.get(path, headers=AUTH)
        assert response.status_code == 200, (path, response.status_code)
        assert "no-store" in response.get("Cache-Control", ""), path
    # Refusals and actions too, and the metrics, read with their token.
    refused = await client.get("/queues/api/queues/")
    assert refused.status_code == 401 and "no-store" in refused["Cache-Control"]
    paused = await client.post("/queues/api/queues/mail/pause/", headers=AUTH)
    assert paused.status_code == 200 and "no-store" in paused["Cache-Control"]
    scraped = await client.get("/queues/metrics", headers={"Authorization": "Bearer scrape-me"})
    assert scraped.status_code == 200 and scraped["Cache-Control"] == "no-store"


async def test_open_reads_leave_caching_to_the_site(client: AsyncClient, peer: Peer) -> None:
    peer("add", "--queue", "mail", "--name", "hello")
    for path in ("/queues/", "/queues/q/mail/"):
        response = await client.get(path)
        assert response.status_code == 200 and "no-store" not in response.get(
            "Cache-Control", ""
        ), path
