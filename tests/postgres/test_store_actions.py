"""Actions on a Postgres store go through BullMQ's own Postgres backend and are seen by Node's
reads: retry, remove, promote, pause and resume, add; refusals name why; each is audited and
refused under read-only like any action."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.action_requests import ok, post
from tests.support.peer import PostgresPeer
from tests.support.servers.postgres_server import PostgresServer

pytestmark = pytest.mark.django_db(transaction=True)


def state_of(pg_peer: PostgresPeer, queue: str, job_id: str) -> str:
    found = pg_peer("job-status", "--queue", queue, "--id", job_id)
    return str(found["state"]) if found["exists"] else "missing"


async def test_retry_remove_promote_seen_by_node(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    assert state_of(pg_peer, "shop", "charge-9") == "failed"
    body = await ok(client, "queues/shop@pg/jobs/charge-9/retry/")
    assert body["from"] == "failed"
    assert state_of(pg_peer, "shop", "charge-9") == "waiting"

    await ok(client, "queues/shop@pg/jobs/remind-2/promote/")
    assert state_of(pg_peer, "shop", "remind-2") == "waiting"

    await ok(client, "queues/shop@pg/jobs/report-feb/remove/")
    gone = pg_peer("inspect", "--queue", "shop", "--ids", "report-feb")
    assert gone["details"]["report-feb"] is None
    assert "report-feb" not in gone["jobs"]["completed"]


async def test_refusals_say_why_and_change_nothing(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    active = await post(client, "queues/shop@pg/jobs/long-1/remove/")
    assert active.status_code == 409 and "active" in active.json()["error"]
    waiting = await post(client, "queues/shop@pg/jobs/order-42/promote/")
    assert waiting.status_code == 409 and "only delayed jobs" in waiting.json()["error"]
    missing = await post(client, "queues/shop@pg/jobs/no-such/retry/")
    assert missing.status_code == 404
    assert state_of(pg_peer, "shop", "long-1") == "active"
    assert state_of(pg_peer, "shop", "order-42") == "waiting"


async def test_pause_resume_and_add_seen_by_node(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    await ok(client, "queues/shop@pg/pause/")
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is True
    await ok(client, "queues/shop@pg/resume/")
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is False

    added = await ok(
        client,
        "queues/shop@pg/add/",
        {"name": "restock", "data": json.dumps({"sku": "<b>x</b>"}), "opts": '{"priority": 3}'},
    )
    (job_id,) = added["jobIds"]
    seen = pg_peer("inspect", "--queue", "shop", "--ids", job_id)["details"][job_id]
    assert (seen["name"], seen["data"], seen["state"]) == (
        "restock",
        {"sku": "<b>x</b>"},
        "prioritized",
    )
    # A Node worker works a job Bullpen added to a queue of its own, and one Bullpen retried.
    pg_peer("add", "--queue", "fresh", "--name", "first", "--data", "{}")
    fresh = await ok(client, "queues/fresh@pg/add/", {"name": "ping", "data": "{}"})
    assert pg_peer("work", "--queue", "fresh", "--count", "2")["completed"] == 2
    (ping,) = fresh["jobIds"]
    assert state_of(pg_peer, "fresh", ping) == "completed"
    await ok(client, f"queues/fresh@pg/jobs/{ping}/retry/")
    assert pg_peer("work", "--queue", "fresh", "--count", "1")["completed"] == 1
    assert state_of(pg_peer, "fresh", ping) == "completed"


async def test_actions_are_audited_and_refused_under_read_only(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any], with_pg: dict[str, Any]
) -> None:
    await ok(client, "queues/shop@pg/jobs/charge-9/retry/")
    entry = await AuditEntry.objects.filter(action="retry").alatest("id")
    assert (entry.queue, entry.connection, entry.status) == ("shop@pg", "pg", 200)
    (other,) = [job_id for job_id in scenario["ids"]["failed"] if job_id != "charge-9"]
    with override_settings(BULLPEN={**with_pg, "READ_ONLY": True}):
        refused = await post(client, f"queues/shop@pg/jobs/{other}/retry/")
    assert refused.status_code == 403
    assert state_of(pg_peer, "shop", other) == "failed"


async def test_an_unreachable_store_answers_503(
    client: AsyncClient,
    pg_peer: PostgresPeer,
    with_pg: dict[str, Any],
    postgres_server: PostgresServer,
) -> None:
    pg_peer("add", "--queue", "mail", "--name", "hello", "--data", "{}")
    config = {
        **with_pg,
        "CONNECTIONS": {**with_pg["CONNECTIONS"], "pg": "postgresql://x@127.0.0.1:1/bullmq"},
    }
    with override_settings(BULLPEN=config):
        down = await post(client, "queues/mail@pg/pause/")
        assert down.status_code == 503 and "is unreachable" in down.json()["error"]
        listed = await client.get("/queues/api/queues/")
    assert listed.status_code == 200


async def test_retry_all_promote_all_and_clean_seen_by_node(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    retried = await ok(client, "queues/shop@pg/retry/", {"state": "failed"})
    assert retried["count"] == 2 and retried["state"] == "failed"
    promoted = await ok(client, "queues/shop@pg/promote/")
    assert promoted["count"] == 2
    node = pg_peer("inspect", "--queue", "shop")["counts"]
    assert (node["failed"], node["delayed"], node["waiting"]) == (0, 0, 8)

    cleaned = await ok(client, "queues/shop@pg/clean/", {"state": "completed", "grace_ms": "0"})
    assert sorted(cleaned["jobIds"]) == sorted(scenario["ids"]["completed"])
    assert pg_peer("inspect", "--queue", "shop")["counts"]["completed"] == 0
    bad = await post(client, "queues/shop@pg/clean/", {"state": "everything"})
    assert bad.status_code == 400
    entries = [e async for e in AuditEntry.objects.filter(queue="shop@pg").order_by("id")]
    assert [e.action for e in entries] == ["retry-all", "promote-all", "clean", "clean"]
    assert [e.status for e in entries] == [200, 200, 200, 400]


async def test_update_data_duplicate_and_priority_seen_by_node(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    await ok(client, "queues/shop@pg/jobs/order-42/data/", {"data": '{"order": 42, "b": "<x>"}'})
    copy = (await ok(client, "queues/shop@pg/jobs/order-42/duplicate/"))["newJobId"]
    await ok(client, f"queues/shop@pg/jobs/{copy}/priority/", {"priority": "5"})
    seen = pg_peer("inspect", "--queue", "shop", "--ids", f"order-42,{copy}")["details"]
    assert seen["order-42"]["data"] == {"order": 42, "b": "<x>"}
    assert seen[copy]["data"] == {"order": 42, "b": "<x>"} and seen[copy]["name"] == "process-order"
    assert (seen[copy]["priority"], seen[copy]["state"]) == (5, "prioritized")


async def test_actions_not_done_on_postgres_yet_say_so_and_change_nothing(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    for path in ("jobs/long-1/move-to-wait/", "jobs/long-1/move-to-failed/", "concurrency/"):
        refused = await post(client, f"queues/shop@pg/{path}", {"concurrency": "2"})
        assert refused.status_code == 400, path
        assert "a queue on a PostgreSQL store" in refused.json()["error"]
    assert pg_peer("inspect", "--queue", "shop")["counts"]["waiting"] == 4
    entry = await AuditEntry.objects.filter(action="concurrency").alatest("id")
    assert (entry.queue, entry.status) == ("shop@pg", 400)
