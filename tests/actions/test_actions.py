"""Every action through the API: checked in Redis, then honoured by a real Node BullMQ worker."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from channels.layers import get_channel_layer
from django.test import AsyncClient, override_settings

from dashboard.live.channel_groups import group_name
from dashboard.models import AuditEntry
from tests.support.action_requests import AUTH, node, ok, post
from tests.support.action_waits import accepted, finished
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scenario(peer: Peer) -> dict[str, Any]:
    return peer("scenario", "--queue", "shop")


async def test_retry_failed_job_then_node_completes_it(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any], redis_client: Any
) -> None:
    job_id = scenario["ids"]["failed"][0]
    body = await ok(client, f"queues/shop/jobs/{job_id}/retry/")
    assert body["jobIds"] == [job_id] and body["from"] == "failed"
    assert redis_client.zscore("bull:shop:failed", job_id) is None
    assert job_id in redis_client.lrange("bull:shop:wait", 0, -1)
    # Node takes the retried job (waiting ones first in line are processed too).
    await node(peer, "work", "--queue", "shop", "--count", "6", "--concurrency", "3")
    assert redis_client.zscore("bull:shop:completed", job_id) is not None
    # This retry's row (a retry another test's request left behind may be there too).
    rows = [
        (entry.username, entry.queue, entry.job_ids, entry.result)
        async for entry in AuditEntry.objects.filter(action="retry", queue="shop")
    ]
    assert ("operator", "shop", [job_id], "ok") in rows


async def test_retry_completed_and_conflicts(client: AsyncClient, scenario: dict[str, Any]) -> None:
    done = scenario["ids"]["completed"][0]
    assert (await ok(client, f"queues/shop/jobs/{done}/retry/"))["from"] == "completed"
    waiting = scenario["ids"]["waiting"][0]
    conflict = await post(client, f"queues/shop/jobs/{waiting}/retry/")
    assert conflict.status_code == 409 and "only failed or completed" in conflict.json()["error"]


async def test_remove_and_active_is_409(
    client: AsyncClient, scenario: dict[str, Any], redis_client: Any
) -> None:
    job_id = scenario["ids"]["failed"][1]
    await ok(client, f"queues/shop/jobs/{job_id}/remove/")
    assert not redis_client.exists(f"bull:shop:{job_id}")
    assert redis_client.zscore("bull:shop:failed", job_id) is None
    active = await post(client, "queues/shop/jobs/long-1/remove/")
    assert active.status_code == 409
    assert redis_client.exists("bull:shop:long-1")
    refused = await AuditEntry.objects.aget(action="remove", status=409)
    assert refused.result == "refused" and refused.job_ids == ["long-1"]


async def test_promote_one_and_all_then_node_runs_them(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    ids = [
        (
            await node(
                peer,
                "add",
                "--queue",
                "later",
                "--name",
                f"r{i}",
                "--data",
                "{}",
                "--opts",
                '{"delay": 3600000}',
            )
        )["id"]
        for i in range(3)
    ]
    await ok(client, f"queues/later/jobs/{ids[0]}/promote/")
    assert redis_client.zcard("bull:later:delayed") == 2
    body = accepted(await post(client, "queues/later/promote/"))
    assert body["action"] == "promote-all" and body["total"] == 2
    status = await finished(client, body)
    assert (status["state"], status["count"]) == ("done", 2)
    assert redis_client.zcard("bull:later:delayed") == 0
    await node(peer, "work", "--queue", "later", "--count", "3")
    assert redis_client.zcard("bull:later:completed") == 3
    not_delayed = await post(client, f"queues/later/jobs/{ids[0]}/promote/")
    assert not_delayed.status_code == 409


async def test_retry_all_in_batches_with_progress(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    for i in range(5):
        await node(peer, "add", "--queue", "bulk", "--name", f"n{i}", "--data", "{}")
    await node(peer, "work", "--queue", "bulk", "--count", "5", "--fail")
    assert redis_client.zcard("bull:bulk:failed") == 5
    # The queue page's live messages: progress, then the end with what the page says.
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(group_name(("queue", "bulk")), channel)
    with override_settings(BULLPEN={**bullpen_settings, "ACTIONS": {"batch_size": 2}}):
        asked = "queues/bulk/retry/?state=failed"
        body = accepted(await post(client, asked, **{"Accept-Language": "de"}))
        assert (body["action"], body["queue"], body["total"]) == ("retry-all", "bulk", 5)
        # What the asking page shows at once, in its language: the bar and the toast.
        assert body["text"] == "Alle erneut versuchen: gestartet, 5 Jobs"
        assert "Alle erneut versuchen: 0 von 5" in body["html"]
        assert 'data-testid="bulk-cancel"' in body["html"]
        status = await finished(client, body)
    assert (status["state"], status["count"], status["text"]) == ("done", 5, "5 jobs retried")
    assert '<span class="label" data-testid="bulk-label">5 jobs retried</span>' in status["html"]
    assert "bulk-cancel" not in status["html"]
    in_french = await client.get(body["statusUrl"], headers={**AUTH, "Accept-Language": "fr"})
    assert in_french.json()["text"] == "5 tâches relancées"
    assert ">5 tâches relancées</span>" in in_french.json()["html"]
    assert redis_client.zcard("bull:bulk:failed") == 0
    assert redis_client.llen("bull:bulk:wait") == 5
    messages = []
    while True:
        message = await asyncio.wait_for(layer.receive(channel), 5)
        messages.append(message["payload"])
        if message["payload"]["state"] == "done":
            break
    assert all(m["type"] == "bulk" and m["id"] == body["id"] for m in messages)
    assert messages[-1] | {"id": ""} == {
        "type": "bulk",
        "queue": "bulk",
        "action": "retry-all",
        "done": 5,
        "total": 5,
        "id": "",
        "state": "done",
        "text": "5 jobs retried",
        # Each page's bar says it in the page's language (dashboard/live/render.py).
        "texts": {
            "en": "5 jobs retried",
            "de": "5 Jobs erneut versucht",
            "fr": "5 tâches relancées",
        },
    }
    # Audited when it started and when it ended, with the count it moved.
    rows = [e async for e in AuditEntry.objects.filter(action="retry-all").order_by("id")]
    assert [(e.detail["phase"], e.status, e.count, e.result) for e in rows] == [
        ("started", 202, 0, "ok"),
        ("done", 200, 5, "ok"),
    ]
    assert all(e.detail["actionId"] == body["id"] and e.username == "operator" for e in rows)
    await node(peer, "work", "--queue", "bulk", "--count", "5")
    assert redis_client.zcard("bull:bulk:completed") == 5
    bad = await post(client, "queues/bulk/retry/?state=active")
    assert bad.status_code == 400


async def test_clean_pause_resume_empty(client: AsyncClient, peer: Peer, redis_client: Any) -> None:
    for i in range(4):
        await node(peer, "add", "--queue", "ops", "--name", f"n{i}", "--data", "{}")
    await node(peer, "work", "--queue", "ops", "--count", "4")
    body = accepted(await post(client, "queues/ops/clean/?state=completed&grace_ms=0&limit=3"))
    status = await finished(client, body)
    assert (status["state"], status["count"]) == ("done", 3)
    assert status["params"] == {"state": "completed", "grace_ms": 0, "limit": 3}
    assert redis_client.zcard("bull:ops:completed") == 1

    await ok(client, "queues/ops/pause/")
    assert redis_client.hget("bull:ops:meta", "paused") == "1"
    await node(peer, "add", "--queue", "ops", "--name", "held", "--data", "{}")
    with pytest.raises(AssertionError, match="timed out"):
        await node(peer, "work", "--queue", "ops", "--count", "1", "--timeout-ms", "2500")
    assert redis_client.llen("bull:ops:wait") == 1  # a paused queue gets no processing
    await ok(client, "queues/ops/resume/")
    await node(peer, "work", "--queue", "ops", "--count", "1")
    assert redis_client.llen("bull:ops:wait") == 0

    for i in range(3):
        await node(peer, "add", "--queue", "ops", "--name", f"e{i}", "--data", "{}")
    await node(
        peer, "add", "--queue", "ops", "--name", "d", "--data", "{}", "--opts", '{"delay": 60000}'
    )
    body = await ok(client, "queues/ops/empty/")
    assert body["count"] == 4
    assert redis_client.llen("bull:ops:wait") == 0 and redis_client.zcard("bull:ops:delayed") == 0


async def test_obliterate_needs_pause_and_the_typed_name(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add", "--queue", "doomed", "--name", "n", "--data", "{}")
    not_paused = await post(client, "queues/doomed/obliterate/", {"confirm": "doomed"})
    assert not_paused.status_code == 409
    await ok(client, "queues/doomed/pause/")
    wrong_name = await post(client, "queues/doomed/obliterate/", {"confirm": "dooomed"})
    assert wrong_name.status_code == 400
    await ok(client, "queues/doomed/obliterate/", {"confirm": "doomed"})
    assert redis_client.keys("bull:doomed:*") == []


async def test_update_duplicate_priority_add(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    job_id = (await node(peer, "add", "--queue", "edit", "--name", "n", "--data", '{"a": 1}'))["id"]
    await ok(client, f"queues/edit/jobs/{job_id}/data/", {"data": '{"a": 2, "b": "<x>"}'})
    assert redis_client.hget(f"bull:edit:{job_id}", "data") == '{"a":2,"b":"<x>"}'
    copy = (await ok(client, f"queues/edit/jobs/{job_id}/duplicate/"))["newJobId"]
    assert redis_client.hget(f"bull:edit:{copy}", "data") == '{"a":2,"b":"<x>"}'
    await ok(client, f"queues/edit/jobs/{copy}/priority/", {"priority": "5"})
    assert redis_client.zscore("bull:edit:prioritized", copy) is not None
    added = await ok(
        client,
        "queues/edit/add/",
        {"name": "from-form", "data": '{"x": true}', "opts": '{"attempts": 2}'},
    )
    new_id = added["jobIds"][0]
    assert redis_client.hget(f"bull:edit:{new_id}", "name") == "from-form"
    bad = await post(client, "queues/edit/add/", {"name": "x", "opts": '{"repeat": {}}'})
    assert bad.status_code == 400 and "Unsupported options" in bad.json()["error"]
    await node(peer, "work", "--queue", "edit", "--count", "3")
    assert redis_client.zcard("bull:edit:completed") == 3


async def test_bulk_and_all_queues(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any], redis_client: Any
) -> None:
    failed = scenario["ids"]["failed"]
    body = await ok(client, "queues/shop/bulk/", {"action": "retry", "ids": [*failed, "nope"]})
    assert body["count"] == 2 and body["results"]["nope"].startswith("No job")
    delayed = scenario["ids"]["delayed"]
    body = await ok(client, "queues/shop/bulk/", {"action": "promote", "ids": delayed})
    assert body["count"] == 2
    body = await ok(client, "pause-all/")
    assert body["count"] == 3
    assert all(
        redis_client.hget(f"bull:{q}:meta", "paused") == "1"
        for q in ("shop", "shop-children", "shop-paused")
    )
    await ok(client, "resume-all/")
    assert not any(redis_client.hget(f"bull:{q}:meta", "paused") for q in ("shop", "shop-paused"))


MUTATIONS = [
    "queues/shop/jobs/3/retry/",
    "queues/shop/jobs/3/remove/",
    "queues/shop/jobs/14/promote/",
    "queues/shop/jobs/3/data/",
    "queues/shop/jobs/3/duplicate/",
    "queues/shop/jobs/6/priority/",
    "queues/shop/retry/",
    "queues/shop/promote/",
    "queues/shop/clean/",
    "queues/shop/pause/",
    "queues/shop/resume/",
    "queues/shop/empty/",
    "queues/shop/obliterate/",
    "queues/shop/add/",
    "queues/shop/bulk/",
    "queues/shop/schedulers/s1/remove/",
    "queues/shop/jobs/14/reschedule/",
    "queues/shop/jobs/3/remove-unprocessed-children/",
    "queues/shop/jobs/3/detach/",
    "queues/shop/deduplication/dedup-1/release/",
    "queues/shop/deduplication/release-orphans/",
    "queues/shop/jobs/3/move-to-failed/",
    "queues/shop/jobs/3/move-to-wait/",
    "queues/shop/concurrency/",
    "queues/shop/rate-limit/",
    "queues/shop/rate-limit/release/",
    "queues/shop/obliterate/?force=1",
    "pause-all/",
    "resume-all/",
]


@pytest.mark.parametrize("path", MUTATIONS)
async def test_every_mutation_is_guarded(
    client: AsyncClient,
    scenario: dict[str, Any],
    path: str,
    bullpen_settings: dict[str, Any],
    redis_client: Any,
) -> None:
    before = redis_client.dbsize()
    url = f"/queues/api/{path}"
    anonymous = await client.post(url)
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Basic")
    wrong = await client.post(
        url, headers={"Authorization": "Basic " + base64.b64encode(b"operator:guess").decode()}
    )
    assert wrong.status_code == 401
    get = await client.get(url, headers=AUTH)
    assert get.status_code == 405
    cross = await client.post(url, headers={**AUTH, "Origin": "https://evil.example"})
    assert cross.status_code == 403 and "cross-site" in cross.json()["error"]
    fetch_site = await client.post(url, headers={**AUTH, "Sec-Fetch-Site": "cross-site"})
    assert fetch_site.status_code == 403
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        read_only = await client.post(url, headers=AUTH)
    assert read_only.status_code == 403 and "Read-only" in read_only.json()["error"]
    assert redis_client.dbsize() == before  # nothing changed
    refusals = [e async for e in AuditEntry.objects.filter(status=403)]
    assert len(refusals) == 3 and all(e.username == "operator" for e in refusals)
    if "/jobs/" in path:
        missing = await client.post(
            url.replace("/jobs/3/", "/jobs/404/")
            .replace("/jobs/14/", "/jobs/404/")
            .replace("/jobs/6/", "/jobs/404/"),
            {"data": "{}", "priority": "1", "delay_ms": "1000"},
            headers=AUTH,
        )
        assert missing.status_code == 404


async def test_unknown_queue_is_404(client: AsyncClient) -> None:
    response = await post(client, "queues/nope/pause/")
    assert response.status_code == 404


async def test_per_queue_read_only(
    client: AsyncClient, scenario: dict[str, Any], bullpen_settings: dict[str, Any]
) -> None:
    config = {**bullpen_settings, "QUEUE_OPTIONS": {"shop": {"read_only": True}}}
    with override_settings(BULLPEN=config):
        assert (await post(client, "queues/shop/pause/")).status_code == 403
        assert (await post(client, "queues/shop-paused/resume/")).status_code == 200
        listed = (await client.get("/queues/api/queues/")).json()["queues"]
        assert {q["name"]: q["readOnly"] for q in listed}["shop"] is True
