"""Hostile job data written by Node BullMQ: nested deeper than any parser's limit, or huge.
Pages, the API and searches answer, flag what they could not show, and the job page reads
its fields cut inside Redis."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from queues.reads.jsontext import MAX_DEPTH, TooDeep, depth, loads_shown
from tests.support.peer import Peer
from tests.support.search_reads import stream

DEEP = "[" * 2000 + "1" + "]" * 2000  # past every parser's limit; Node writes it happily


@pytest.fixture
def deep_job(peer: Peer) -> str:
    job_id: str = peer("add", "--queue", "deep", "--name", "nested", "--data", DEEP)["id"]
    peer("add", "--queue", "deep", "--name", "plain", "--data", json.dumps({"x": 1}))
    return job_id


async def test_deep_data_answers_everywhere(
    client: AsyncClient, deep_job: str, redis_client: Any
) -> None:
    assert redis_client.hget(f"bull:deep:{deep_job}", "data") == DEEP
    page = await asyncio.wait_for(client.get(f"/queues/q/deep/jobs/{deep_job}/"), 30)
    assert page.status_code == 200
    assert "nested too deeply" in page.content.decode()
    api = await asyncio.wait_for(client.get(f"/queues/api/queues/deep/jobs/{deep_job}/"), 30)
    assert api.status_code == 200
    body = api.json()
    assert body["data"] == DEEP and "data" in body["invalid"]
    rows = await asyncio.wait_for(client.get("/queues/api/queues/deep/jobs/?state=waiting"), 30)
    assert rows.status_code == 200 and len(rows.json()["jobs"]) == 2
    assert (await client.get("/queues/q/deep/?state=waiting")).status_code == 200


async def test_a_field_search_skips_unparsable_data_and_says_so(
    client: AsyncClient, deep_job: str
) -> None:
    path = "/queues/api/queues/deep/search/?state=waiting&q=data.x%20%3D%201"
    lines = await asyncio.wait_for(stream(client, path), 30)
    matches = [line["job"]["name"] for line in lines if line["type"] == "job"]
    assert matches == ["plain"]
    assert lines[-1]["done"] is True and lines[-1]["skipped"] == 1
    text = await asyncio.wait_for(stream(client, "/queues/api/queues/deep/search/?q=[[[["), 30)
    assert text[-1]["done"] is True


async def test_the_job_page_reads_a_capped_view(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    big = json.dumps({"blob": "x" * 100_000})
    job_id = peer("add", "--queue", "huge", "--name", "big", "--data", big)["id"]
    before = redis_client.info("commandstats").get("cmdstat_hgetall", {}).get("calls", 0)
    with override_settings(BULLPEN={**bullpen_settings, "DETAIL_FIELD_CAP": 10_000}):
        page = await client.get(f"/queues/q/huge/jobs/{job_id}/")
        form = await client.get(f"/queues/q/huge/jobs/{job_id}/edit-data/")
    after = redis_client.info("commandstats").get("cmdstat_hgetall", {}).get("calls", 0)
    html = page.content.decode()
    assert page.status_code == 200 and after == before  # no full read of the hash
    assert "Shown cut to the first" in html and len(html) < 60_000
    assert "Download JSON" in html and 'data-copy-target="job-json"' not in html
    assert "too large to edit here" in form.content.decode()
    full = (await client.get(f"/queues/api/queues/huge/jobs/{job_id}/")).json()
    assert full["data"] == {"blob": "x" * 100_000}  # the download has all of it


def test_depth_is_bounded_without_recursion() -> None:
    assert depth('{"a": "[[[[[[", "b": [[1]]}') == 3
    assert loads_shown("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(TooDeep):
        loads_shown("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(TooDeep):
        loads_shown(DEEP)
