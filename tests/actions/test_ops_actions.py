"""Rescheduling, a queue's global concurrency and rate limit, a parent's unprocessed children
and a forced obliterate, through the API: checked in Redis, then read or honoured by Node
BullMQ. The guards these routes share with every action are in test_actions.py's matrix."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.action_requests import AUTH, node, ok, post
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

HOUR = 3_600_000


@pytest.fixture
def scenario(peer: Peer) -> dict[str, Any]:
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")
    return ids


def due_at(redis_client: Any, queue: str, job_id: str) -> float:
    """When the delayed job runs, from its score (BullMQ keeps the time in its upper bits)."""
    score = redis_client.zscore(f"bull:{queue}:delayed", job_id)
    assert score is not None, f"job {job_id} is not delayed"
    return float(score) / 0x1000


async def test_reschedule_a_delayed_job_then_node_runs_it_when_due(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    opts = f'{{"delay": {HOUR}}}'
    job_id = (await node(peer, "add", "--queue", "later", "--name", "r", "--opts", opts))["id"]
    before = due_at(redis_client, "later", job_id)

    asked = time.time() * 1000
    body = await ok(client, f"queues/later/jobs/{job_id}/reschedule/", {"delay_ms": 2 * HOUR})
    assert (body["action"], body["jobIds"], body["delayMs"]) == ("reschedule", [job_id], 2 * HOUR)
    assert asked + 2 * HOUR <= body["dueAt"] <= time.time() * 1000 + 2 * HOUR
    assert due_at(redis_client, "later", job_id) == pytest.approx(body["dueAt"], abs=5)
    assert due_at(redis_client, "later", job_id) > before + HOUR - 5_000
    seen = await node(peer, "job-status", "--queue", "later", "--id", job_id)
    assert (seen["state"], seen["delay"]) == ("delayed", 2 * HOUR)

    # As a person types it on the page: due in half a second, and Node's worker takes it then.
    await ok(client, f"queues/later/jobs/{job_id}/reschedule/", {"delay": "500 ms"})
    assert due_at(redis_client, "later", job_id) <= time.time() * 1000 + 500
    await node(peer, "work", "--queue", "later", "--count", "1", "--timeout-ms", "10000")
    seen = await node(peer, "job-status", "--queue", "later", "--id", job_id)
    assert seen["state"] == "completed"

    done = await post(client, f"queues/later/jobs/{job_id}/reschedule/", {"delay_ms": 1000})
    assert done.status_code == 409
    assert (
        done.json()["error"] == f"Job '{job_id}' is completed; only delayed jobs can be rescheduled"
    )
    for given, message in [
        ({}, "delay_ms is required"),
        ({"delay": "soon"}, "delay: "),
        ({"delay": "1 h", "delay_ms": "5"}, "not both"),
        ({"delay_ms": "-1"}, "delay_ms must be between 0"),
    ]:
        refused = await post(client, f"queues/later/jobs/{job_id}/reschedule/", given)
        assert refused.status_code == 400 and message in refused.json()["error"], given
    audited = [e async for e in AuditEntry.objects.filter(action="reschedule").order_by("id")]
    assert [(e.status, e.job_ids) for e in audited][:3] == [
        (200, [job_id]),
        (200, [job_id]),
        (409, [job_id]),
    ]


async def test_global_concurrency_is_set_and_removed_as_node_reads_it(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add", "--queue", "capped", "--name", "n")
    body = await ok(client, "queues/capped/concurrency/", {"concurrency": "3"})
    assert (body["action"], body["concurrency"]) == ("concurrency", 3)
    assert redis_client.hget("bull:capped:meta", "concurrency") == "3"
    assert (await node(peer, "limits", "--queue", "capped"))["concurrency"] == 3
    listed = (await client.get("/queues/api/queues/")).json()["queues"]
    assert {q["name"]: q["globalConcurrency"] for q in listed} == {"capped": 3}
    page = (await client.get("/queues/q/capped/")).content.decode()
    assert re.search(r'data-testid="concurrency-badge">≤ 3 at once<', page)

    body = await ok(client, "queues/capped/concurrency/", {"concurrency": ""})
    assert body["concurrency"] is None
    assert redis_client.hget("bull:capped:meta", "concurrency") is None
    assert (await node(peer, "limits", "--queue", "capped"))["concurrency"] is None

    for given, message in [
        ({}, "concurrency is required"),
        ({"concurrency": "0"}, "concurrency must be between 1 and"),
        ({"concurrency": "two"}, "concurrency must be a whole number"),
    ]:
        refused = await post(client, "queues/capped/concurrency/", given)
        assert refused.status_code == 400 and message in refused.json()["error"], given
    assert redis_client.hget("bull:capped:meta", "concurrency") is None


async def test_rate_limit_holds_node_back_until_released_or_removed(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add-bulk", "--queue", "metered", "--name", "n", "--count", "2")
    # A worker held back by the limit asks again every 200 ms (and so closes at once).
    work = ("work", "--queue", "metered", "--max-rate-limit-delay-ms", "200")
    body = await ok(client, "queues/metered/rate-limit/", {"max": "1", "duration_ms": "60000"})
    assert body["rateLimit"] == {"max": 1, "duration": 60000}
    assert redis_client.hmget("bull:metered:meta", "max", "duration") == ["1", "60000"]
    seen = await node(peer, "limits", "--queue", "metered")
    assert seen["rateLimit"] == {"max": 1, "duration": 60000} and seen["rateLimitTtl"] <= 0

    # One job a minute: Node's worker runs one and then waits for the window to end.
    with pytest.raises(AssertionError, match="timed out"):
        await node(peer, *work, "--count", "2", "--timeout-ms", "2500")
    assert redis_client.zcard("bull:metered:completed") == 1
    assert (await node(peer, "limits", "--queue", "metered"))["rateLimitTtl"] > 50_000

    body = await ok(client, "queues/metered/rate-limit/release/")
    assert (body["action"], body["released"], body["count"]) == ("rate-limit-release", True, 1)
    assert not redis_client.exists("bull:metered:limiter")
    assert (await node(peer, "limits", "--queue", "metered"))["rateLimitTtl"] <= 0
    await node(peer, *work, "--count", "1", "--timeout-ms", "5000")
    assert redis_client.zcard("bull:metered:completed") == 2
    again = await ok(client, "queues/metered/rate-limit/release/")
    assert (again["released"], again["count"]) == (True, 1)  # that job opened a new window

    body = await ok(client, "queues/metered/rate-limit/", {"max": "", "duration_ms": ""})
    assert body["rateLimit"] is None
    assert redis_client.hmget("bull:metered:meta", "max", "duration") == [None, None]
    assert (await node(peer, "limits", "--queue", "metered"))["rateLimit"] is None
    nothing = await ok(client, "queues/metered/rate-limit/release/")
    assert (nothing["released"], nothing["count"]) == (False, 0)

    for given, message in [
        ({}, "max and duration_ms are required"),
        ({"max": "5"}, "Give max and duration_ms together"),
        ({"max": "5", "duration_ms": "0"}, "duration_ms must be between 1 and"),
    ]:
        refused = await post(client, "queues/metered/rate-limit/", given)
        assert refused.status_code == 400 and message in refused.json()["error"], given


async def test_remove_a_flow_parents_unprocessed_children(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any], redis_client: Any
) -> None:
    parent = scenario["ids"]["flow"]["parent"]["id"]
    children = scenario["ids"]["children"]
    assert redis_client.scard(f"bull:shop:{parent}:dependencies") == 2
    page = (await client.get(f"/queues/q/shop/jobs/{parent}/", headers=AUTH)).content.decode()
    assert 'data-testid="remove-unprocessed-children"' in page

    body = await ok(client, f"queues/shop/jobs/{parent}/remove-unprocessed-children/")
    assert (body["action"], body["jobIds"], body["count"], body["kept"]) == (
        "remove-unprocessed-children",
        [parent],
        2,
        0,
    )
    assert not any(redis_client.exists(f"bull:shop-children:{child}") for child in children)
    assert redis_client.llen("bull:shop-children:wait") == 0
    # With no child left to wait for, BullMQ moves the parent on, as Node sees it.
    for child in children:
        assert (await node(peer, "job-status", "--queue", "shop-children", "--id", child)) == {
            "exists": False
        }
    seen = await node(peer, "job-status", "--queue", "shop", "--id", parent)
    assert seen["state"] == "waiting" and seen["dependencies"]["unprocessed"] == 0

    again = await post(client, f"queues/shop/jobs/{parent}/remove-unprocessed-children/")
    assert again.status_code == 409 and "no unprocessed children" in again.json()["error"]
    page = (await client.get(f"/queues/q/shop/jobs/{parent}/", headers=AUTH)).content.decode()
    assert 'data-testid="remove-unprocessed-children"' not in page


async def test_obliterate_a_queue_with_an_active_job_takes_force(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any], redis_client: Any
) -> None:
    assert redis_client.llen("bull:shop:active") == 1
    await ok(client, "queues/shop/pause/")
    page = (await client.get("/queues/q/shop/", headers=AUTH)).content.decode()
    assert 'data-testid="obliterate-force"' in page and 'data-testid="obliterate"' not in page

    refused = await post(client, "queues/shop/obliterate/", {"confirm": "shop"})
    assert refused.status_code == 409 and "force" in refused.json()["error"]
    wrong = await post(client, "queues/shop/obliterate/?force=1", {"confirm": "shops"})
    assert wrong.status_code == 400
    odd = await post(client, "queues/shop/obliterate/?force=maybe", {"confirm": "shop"})
    assert odd.status_code == 400 and odd.json()["error"] == "force must be 1 or 0"
    assert redis_client.exists("bull:shop:long-1")

    body = await ok(client, "queues/shop/obliterate/?force=1", {"confirm": "shop"})
    assert (body["action"], body["force"]) == ("obliterate", True)
    gone = ("long-1", "long-1:lock", "active", "wait", "failed", "completed", "delayed", "meta")
    assert not any(redis_client.exists(f"bull:shop:{key}") for key in gone)
    seen = await node(peer, "inspect", "--queue", "shop")
    states = ("active", "waiting", "prioritized", "delayed", "completed", "failed")
    assert {state: seen["countsAll"][state] for state in states} == dict.fromkeys(states, 0)
    entry = await AuditEntry.objects.aget(action="obliterate", status=200)
    assert entry.detail["force"] is True


async def test_controls_only_for_those_who_may_act(
    client: AsyncClient, scenario: dict[str, Any], bullpen_settings: dict[str, Any]
) -> None:
    delayed = scenario["ids"]["delayed"][0]
    parent = scenario["ids"]["flow"]["parent"]["id"]
    controls = {
        "/queues/q/shop/": ['data-testid="limits"', 'data-testid="release-rate-limit"'],
        f"/queues/q/shop/jobs/{delayed}/": ['data-testid="reschedule"'],
        f"/queues/q/shop/jobs/{parent}/": ['data-testid="remove-unprocessed-children"'],
    }
    for path, marks in controls.items():
        operator = (await client.get(path, headers=AUTH)).content.decode()
        anonymous = (await client.get(path)).content.decode()
        assert all(mark in operator for mark in marks), path
        assert not any(mark in anonymous for mark in marks), path
    read_only_shop = {**bullpen_settings, "QUEUE_OPTIONS": {"shop": {"read_only": True}}}
    with override_settings(BULLPEN=read_only_shop):
        for path, marks in controls.items():
            read_only = (await client.get(path, headers=AUTH)).content.decode()
            assert not any(mark in read_only for mark in marks), path


NEW_ROUTES = [
    "queues/shop/jobs/14/reschedule/",
    "queues/shop/jobs/bundle-1/remove-unprocessed-children/",
    "queues/shop/concurrency/",
    "queues/shop/rate-limit/",
    "queues/shop/rate-limit/release/",
    "queues/shop/obliterate/?force=1",
]


@pytest.mark.parametrize("path", NEW_ROUTES)
async def test_session_users_need_the_csrf_token(path: str, redis_client: Any) -> None:
    admin = await User.objects.acreate_superuser("admin", "admin@example.com", "pw")
    session = AsyncClient(enforce_csrf_checks=True)
    await session.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    before = redis_client.dbsize()
    refused = await session.post(f"/queues/api/{path}", headers={"Origin": "http://testserver"})
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]
    assert redis_client.dbsize() == before
    entry = await AuditEntry.objects.aget()
    assert (entry.username, entry.via, entry.status, entry.result) == (
        "admin",
        "session",
        403,
        "refused",
    )


async def test_a_session_user_sets_concurrency_with_the_pages_token(
    peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add", "--queue", "capped", "--name", "n")
    admin = await User.objects.acreate_superuser("admin", "admin@example.com", "pw")
    session = AsyncClient(enforce_csrf_checks=True)
    await session.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    page = (await session.get("/queues/q/capped/")).content.decode()
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page)
    assert token, "the page gives htmx the CSRF token"
    done = await session.post(
        "/queues/api/queues/capped/concurrency/",
        {"concurrency": "2"},
        headers={"Origin": "http://testserver", "X-CSRFToken": token[1]},
    )
    assert done.status_code == 200, done.content
    assert redis_client.hget("bull:capped:meta", "concurrency") == "2"
