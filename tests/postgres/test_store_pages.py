"""The pages on a Postgres store: the overview, a queue's tabs and a job page render what Node
BullMQ wrote, escaped; the queue page's sections answer without reaching for Redis keys."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient

from tests.support.peer import PostgresPeer

SECTIONS = (
    "groups/",
    "alerts/",
    "workers/",
    "throughput/",
    "history/",
    "history/section/",
    "schedulers/",
    "deduplication/",
    "hygiene/",
)


async def page(client: AsyncClient, path: str) -> str:
    response = await client.get(f"/queues/{path}")
    assert response.status_code == 200, (path, response.content[:3000])
    return response.content.decode()


@pytest.mark.parametrize("section", SECTIONS)
async def test_every_section_of_a_queue_page_answers(
    client: AsyncClient, scenario: dict[str, Any], section: str
) -> None:
    await page(client, f"q/shop@pg/{section}")


async def test_overview_queue_and_job_pages(client: AsyncClient, scenario: dict[str, Any]) -> None:
    overview = await page(client, "")
    assert "shop-paused" in overview and "shop-children" in overview
    failed = await page(client, "q/shop@pg/?state=failed")
    assert "charge-9" in failed and "card declined: 0000" in failed
    job = await page(client, "q/shop@pg/jobs/charge-9/")
    assert "attempt 3: charging card 0000" in job and "card declined" in job


async def test_hostile_job_data_is_escaped(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    hostile = '{"html": "<script>alert(1)</script>"}'
    name = "<img src=x onerror=alert(1)>"
    added = pg_peer("add", "--queue", "evil", "--name", name, "--data", hostile)
    listing = await page(client, "q/evil@pg/?state=waiting")
    job = await page(client, f"q/evil@pg/jobs/{added['id']}/")
    for body in (listing, job):
        assert "<script>alert(1)" not in body and "<img src=x" not in body
        assert "&lt;img src=x onerror=alert(1)&gt;" in body


@pytest.mark.parametrize("fragment", ["flow/", "edit-data/"])
async def test_a_job_pages_fragments_answer(
    client: AsyncClient, scenario: dict[str, Any], fragment: str
) -> None:
    body = await page(client, f"q/shop@pg/jobs/bundle-1/{fragment}")
    assert "bundle-1" in body or "release-1" in body
