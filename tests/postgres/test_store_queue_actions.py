"""Queue-wide actions on a Postgres store through BullMQ's own Postgres functions, checked
against Node's reads: pause with a reason (kept in the site's database), empty, obliterate, and a
job scheduler's run now and removal. Each is audited and refused under read-only like any."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from queues.models import StorePauseReason
from tests.support.action_requests import AUTH, ok, post
from tests.support.peer import PostgresPeer

pytestmark = pytest.mark.django_db(transaction=True)


async def test_pause_reason_is_kept_shown_escaped_and_cleared(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any], redis_client: Any
) -> None:
    reason = "card processor <down> & retrying"
    body = await ok(client, "queues/shop@pg/pause/", {"reason": reason})
    assert (body["action"], body["reason"]) == ("pause", reason)
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is True
    # Bullpen's own state: in the site's database, never in BullMQ's schema nor in Redis.
    kept = [(r.connection, r.queue, r.reason) async for r in StorePauseReason.objects.all()]
    assert kept == [("pg", "shop", reason)]
    assert not redis_client.keys("bullpen:pause-reason:*")
    escaped = "card processor &lt;down&gt; &amp; retrying"
    for path in ("/queues/q/shop@pg/", "/queues/"):
        page = (await client.get(path, headers=AUTH)).content.decode()
        assert 'data-testid="pause-reason"' in page and escaped in page, path
        assert reason not in page, path
    await ok(client, "queues/shop@pg/resume/")
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is False
    assert not await StorePauseReason.objects.aexists()


async def test_empty_removes_what_waits_and_keeps_the_rest(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    before = pg_peer("inspect", "--queue", "shop")["countsAll"]
    waiting = sum(before[state] for state in ("waiting", "prioritized", "delayed"))
    assert waiting > 0
    body = await ok(client, "queues/shop@pg/empty/")
    assert (body["action"], body["count"]) == ("empty", waiting)
    after = pg_peer("inspect", "--queue", "shop")["countsAll"]
    assert (after["waiting"], after["prioritized"], after["delayed"]) == (0, 0, 0)
    for kept in ("active", "completed", "failed", "waiting-children"):
        assert after[kept] == before[kept], kept


async def test_obliterate_asks_for_a_pause_the_name_and_force(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    wrong = await post(client, "queues/shop@pg/obliterate/", {"confirm": "shoe"})
    assert wrong.status_code == 400
    running = await post(client, "queues/shop@pg/obliterate/", {"confirm": "shop"})
    assert running.status_code == 409 and "Pause" in running.json()["error"]
    await ok(client, "queues/shop@pg/pause/")
    active = await post(client, "queues/shop@pg/obliterate/", {"confirm": "shop"})
    assert active.status_code == 409 and "force" in active.json()["error"]
    assert pg_peer("job-status", "--queue", "shop", "--id", "long-1")["state"] == "active"

    await ok(client, "queues/shop@pg/obliterate/", {"confirm": "shop", "force": "1"})
    gone = pg_peer("inspect", "--queue", "shop")
    assert sum(gone["countsAll"].values()) == 0
    assert pg_peer("job-status", "--queue", "shop", "--id", "long-1") == {"exists": False}
    # Another queue of the store is untouched.
    assert sum(pg_peer("inspect", "--queue", "shop-paused")["countsAll"].values()) == 3
    entry = await AuditEntry.objects.filter(action="obliterate").alatest("id")
    assert (entry.queue, entry.status) == ("shop@pg", 200)


async def test_a_scheduler_runs_now_and_is_removed_as_node_reads_it(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    made = pg_peer(
        "upsert-scheduler",
        "--queue",
        "mail",
        "--id",
        "hourly",
        "--every",
        "3600000",
        "--name",
        "digest",
    )
    body = await ok(client, "queues/mail@pg/schedulers/hourly/run/")
    (job_id,) = body["jobIds"]
    assert (body["action"], body["scheduler"]) == ("run-scheduler", "hourly")
    seen = pg_peer("inspect", "--queue", "mail", "--ids", job_id)["details"][job_id]
    assert (seen["name"], seen["data"], seen.get("repeatJobKey")) == (
        "digest",
        {"scheduler": "hourly"},
        None,
    )
    # The schedule itself did not move: the same next job.
    assert pg_peer("scheduler", "--queue", "mail", "--id", "hourly")["nextJobs"] == (
        [made["nextJob"]] if made["nextJob"] else []
    )

    with override_settings(BULLPEN={**with_pg, "READ_ONLY": True}):
        refused = await post(client, "queues/mail@pg/schedulers/hourly/remove/")
    assert refused.status_code == 403
    assert pg_peer("scheduler", "--queue", "mail", "--id", "hourly")["scheduler"] is not None
    removed = await ok(client, "queues/mail@pg/schedulers/hourly/remove/")
    assert removed["action"] == "remove-scheduler"
    assert pg_peer("scheduler", "--queue", "mail", "--id", "hourly")["scheduler"] is None
    again = await post(client, "queues/mail@pg/schedulers/hourly/remove/")
    assert again.status_code == 409 and "hourly" in again.json()["error"]
    missing = await post(client, "queues/mail@pg/schedulers/nope/run/")
    assert missing.status_code == 409
    entries = [
        e.status async for e in AuditEntry.objects.filter(action="remove-scheduler").order_by("id")
    ]
    assert entries == [403, 200, 409]
    assert json.dumps(seen)  # the job Node read is plain JSON


async def test_a_scheduler_made_from_the_dashboard_is_node_s(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    pg_peer("add", "--queue", "mail", "--name", "seed", "--data", "{}")  # BullMQ migrates
    start = int(time.time() * 1000) + 3_600_000
    given = {
        "id": "nightly",
        "every": "86400000",
        "start_date": str(start),
        "name": "report",
        "data": '{"kind": "<all>"}',
        "opts": '{"attempts": 2}',
    }
    made = await ok(client, "queues/mail@pg/schedulers/", given)
    seen = pg_peer("scheduler", "--queue", "mail", "--id", "nightly")
    assert seen["scheduler"]["every"] == 86_400_000 and seen["scheduler"]["name"] == "report"
    assert seen["nextJobs"] == [made["nextJobId"]]
    job = pg_peer("inspect", "--queue", "mail", "--ids", made["nextJobId"])["details"]
    nxt = job[made["nextJobId"]]
    assert (nxt["state"], nxt["data"], nxt["opts"]["attempts"]) == ("delayed", {"kind": "<all>"}, 2)
    assert nxt["delay"] > 3_000_000  # due at its start, an hour from now
