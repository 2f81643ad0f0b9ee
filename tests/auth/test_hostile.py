"""Untrusted job data: everything renders, escaped, bounded, and nothing answers 500."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import AsyncClient
from django.urls import reverse

from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, http_get

SCRIPT_NAME = '<script>alert("x")</script>'


@pytest.fixture
def hostile(peer: Peer) -> dict[str, Any]:
    return peer("add-raw-hostile", "--queue", "hostile")


async def test_script_in_name_and_data_is_escaped(
    client: AsyncClient, hostile: dict[str, Any]
) -> None:
    job_id = hostile["ids"]["script"]
    for path in ("/queues/", "/queues/q/hostile/", f"/queues/q/hostile/jobs/{job_id}/"):
        response = await client.get(path)
        html = response.content.decode()
        assert response.status_code == 200, path
        assert "<script>alert" not in html, path
        assert "<img src=x onerror" not in html, path
    page = (await client.get("/queues/q/hostile/")).content.decode()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    detail = (await client.get(f"/queues/q/hostile/jobs/{job_id}/")).content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;" in detail
    # The copy-as-JSON payload is a JSON script block: no closing tag can escape it.
    assert detail.count("</script>") == detail.count("<script")
    api = await client.get(f"/queues/api/queues/hostile/jobs/{job_id}/")
    assert api.json()["name"] == SCRIPT_NAME


async def test_five_megabyte_payload_is_cut_in_lists(
    client: AsyncClient, hostile: dict[str, Any]
) -> None:
    big = hostile["ids"]["big"]
    response = await client.get("/queues/api/queues/hostile/jobs/?state=waiting")
    assert response.status_code == 200
    assert len(response.content) < 20_000
    row = next(j for j in response.json()["jobs"] if j["id"] == big)
    assert row["truncated"]["data"] > 5 * 1024 * 1024
    assert len(row["data"]) <= 2048
    page = await client.get("/queues/q/hostile/")
    assert page.status_code == 200 and len(page.content) < 50_000
    detail_page = await client.get(f"/queues/q/hostile/jobs/{big}/")
    assert detail_page.status_code == 200
    assert len(detail_page.content) < 600_000
    assert "Shown cut to the first" in detail_page.content.decode()
    # The API's job detail is the whole job, for those who ask for it.
    full = await client.get(f"/queues/api/queues/hostile/jobs/{big}/")
    assert len(full.json()["data"]["blob"]) == 5 * 1024 * 1024


async def test_malformed_hashes_render(client: AsyncClient, peer: Peer, redis_client: Any) -> None:
    peer("add", "--queue", "broken", "--name", "fine", "--data", '{"ok": true}')
    redis_client.hset(
        "bull:broken:77",
        mapping={
            "name": "bad-json",
            "data": "{not json",
            "opts": "[1,",
            "timestamp": "yesterday",
            "stacktrace": "oops",
        },
    )
    redis_client.hset("bull:broken:78", mapping={"data": "{}"})  # no name, no timestamp
    redis_client.hset("bull:broken:79", mapping={"name": "binary", "data": b"\xff\xfe\x00"})
    redis_client.set("bull:broken:80", "a string where a hash should be")
    redis_client.lpush("bull:broken:wait", "77", "78", "79", "80", "missing-hash")

    listing = await client.get("/queues/api/queues/broken/jobs/?state=waiting&per_page=10")
    assert listing.status_code == 200
    rows = {j["id"]: j for j in listing.json()["jobs"]}
    assert rows["77"]["data"] == "{not json" and "data" in rows["77"]["invalid"]
    assert "timestamp" in rows["77"]["invalid"]
    assert rows["78"]["name"] is None and "name" in rows["78"]["invalid"]
    assert "\ufffd" in rows["79"]["data"]
    assert rows["80"]["invalid"] == ["hash"]
    assert "missing-hash" not in rows
    assert (await client.get("/queues/q/broken/")).status_code == 200
    for job_id in ("77", "78", "79"):
        assert (await client.get(f"/queues/q/broken/jobs/{job_id}/")).status_code == 200
        assert (await client.get(f"/queues/api/queues/broken/jobs/{job_id}/")).status_code == 200
    wrong_type = await client.get("/queues/api/queues/broken/jobs/80/")
    assert wrong_type.status_code == 404
    assert "not a readable job hash" in wrong_type.json()["error"]


async def test_wrong_key_types_do_not_blank_the_overview(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    peer("add", "--queue", "good", "--name", "a", "--data", "{}")
    redis_client.hset("bull:odd:meta", "paused", "0")
    redis_client.set("bull:odd:failed", "not a sorted set")
    body = (await client.get("/queues/api/queues/")).json()
    odd = next(q for q in body["queues"] if q["name"] == "odd")
    assert odd["counts"]["failed"] == 0 and odd["problems"]
    assert next(q for q in body["queues"] if q["name"] == "good")["counts"]["waiting"] == 1
    assert (await client.get("/queues/")).status_code == 200


def test_unicode_queue_name(peer: Peer, bullpen_server: LiveServer) -> None:
    # Through daphne: Django's test client mangles non-ASCII paths (it decodes them as latin-1).
    name = "émails ✉ {tag} 東京"
    peer("add", "--queue", name, "--name", "wëlcome", "--data", '{"to": "zoë"}')
    status, body = http_get(bullpen_server.url + "/queues/api/queues/")
    queue = next(q for q in json.loads(body)["queues"] if q["name"] == name)
    assert queue["counts"]["waiting"] == 1
    status, overview = http_get(bullpen_server.url + "/queues/")
    assert status == 200 and name in overview
    queue_url = bullpen_server.url + reverse("bullpen:queue", args=[name])
    status, page = http_get(queue_url)
    assert status == 200 and "wëlcome" in page
    status, jobs = http_get(bullpen_server.url + reverse("bullpen:api-jobs", args=[name]))
    job_id = json.loads(jobs)["jobs"][0]["id"]
    status, _ = http_get(bullpen_server.url + reverse("bullpen:job", args=[name, job_id]))
    assert status == 200


async def test_colon_in_queue_name_is_refused_cleanly(
    client: AsyncClient, redis_client: Any
) -> None:
    # BullMQ refuses ':' in queue names; keys that look like one must not confuse discovery.
    redis_client.hset("bull:a:b:meta", "paused", "0")
    body = (await client.get("/queues/api/queues/")).json()
    assert [q["name"] for q in body["queues"]] == []
    for path in (
        "/queues/api/queues/a:b/jobs/",
        "/queues/q/a:b/",
        "/queues/api/queues/a:b/jobs/1/",
    ):
        response = await client.get(path)
        assert response.status_code == 404, path


async def test_slash_and_percent_in_names(client: AsyncClient, peer: Peer) -> None:
    name = "team/a%20b"
    added = peer(
        "add", "--queue", name, "--name", "n", "--data", "{}", "--opts", '{"jobId": "x/y%2F"}'
    )
    page = await client.get(reverse("bullpen:queue", args=[name]))
    assert page.status_code == 200
    detail = await client.get(reverse("bullpen:api-job", args=[name, added["id"]]))
    assert detail.status_code == 200 and detail.json()["id"] == "x/y%2F"
