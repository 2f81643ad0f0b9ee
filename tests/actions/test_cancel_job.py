"""Cancel from the API: a running job of the embedded runner or of a Node worker with the
documented listener fails with who cancelled it (read back through Node); refusals leave the
job as it was: read-only, a hidden queue, a finished job, an unknown id, nobody listening."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from queues.runner import JobContext, Producer, QueueOptions, Registry
from tests.support.action_requests import AUTH, node, post
from tests.support.peer import Peer
from tests.support.worker_fixtures import Runners, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

LONG = QueueOptions(attempts=3, backoff_ms=10)


async def active(client: Any, queue: str, job_id: str) -> bool:
    return job_id in client.lrange(f"bull:{queue}:active", 0, -1)


async def runner_job(runners: Runners, redis_client: Any, queue: str) -> str:
    """A job the embedded runner holds (its async handler sleeps a minute)."""
    registry = Registry()

    @registry.handler(queue, LONG)
    async def sleep(payload: Any, ctx: JobContext) -> None:
        await asyncio.sleep(60)

    async with Producer(registry) as producer:
        job_id = await producer.add(queue, "sleep", {})
    await runners.start(registry)
    await wait_for("the job to run", lambda: active(redis_client, queue, job_id))
    return job_id


async def test_cancel_fails_a_runner_job_with_who_cancelled_it(
    client: AsyncClient, runners: Runners, redis_client: Any, peer: Peer
) -> None:
    job_id = await runner_job(runners, redis_client, "reports")
    response = await post(client, f"queues/reports/jobs/{job_id}/cancel/", {"reason": "stuck"})
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert (body["action"], body["jobIds"], body["state"]) == ("cancel", [job_id], "failed")
    assert body["reason"] == "Cancelled by operator from Bullpen: stuck"
    seen = await node(peer, "job-status", "--queue", "reports", "--id", job_id)
    assert (seen["state"], seen["failedReason"], seen["attemptsMade"]) == (
        "failed",
        "Cancelled by operator from Bullpen: stuck",
        1,
    )
    row = await AuditEntry.objects.aget(action="cancel", queue="reports")
    assert (row.username, row.job_ids, row.result, row.status) == ("operator", [job_id], "ok", 200)


async def test_cancel_reaches_a_node_worker_with_the_documented_listener(
    client: AsyncClient, redis_client: Any, peer: Peer
) -> None:
    added = await node(peer, "add", "--queue", "render", "--name", "frame", "--data", "{}")
    job_id = str(added["id"])
    worked = asyncio.ensure_future(node(peer, "cancellable", "--queue", "render"))
    await wait_for("Node to run the job", lambda: active(redis_client, "render", job_id))
    response = await post(client, f"queues/render/jobs/{job_id}/cancel/")
    assert response.status_code == 200, response.content[:500]
    assert response.json()["state"] == "failed"
    # Node's own reads of the job, once its worker ended it.
    seen = await worked
    assert (seen["id"], seen["state"]) == (job_id, "failed")
    assert seen["failedReason"] == "Cancelled by operator from Bullpen"


async def test_a_node_worker_without_listener_keeps_its_job_and_the_request_says_so(
    client: AsyncClient, redis_client: Any, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    added = await node(peer, "add", "--queue", "deaf", "--name", "frame", "--data", "{}")
    job_id = str(added["id"])
    worked = asyncio.ensure_future(
        node(peer, "cancellable", "--queue", "deaf", "--no-listener", "--delay-ms", "4000")
    )
    await wait_for("Node to run the job", lambda: active(redis_client, "deaf", job_id))
    with override_settings(BULLPEN={**bullpen_settings, "CANCEL_WAIT": 1.0}):
        started = time.monotonic()
        response = await post(client, f"queues/deaf/jobs/{job_id}/cancel/")
        waited = time.monotonic() - started
    assert response.status_code == 409, response.content[:500]
    assert "still active after 1 s" in response.json()["error"]
    assert waited >= 1.0
    assert await active(redis_client, "deaf", job_id)
    # Left as it was: its worker finishes it as if nobody had asked.
    assert (await worked)["state"] == "completed"


async def test_refusals_leave_the_job_running(
    client: AsyncClient, runners: Runners, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    job_id = await runner_job(runners, redis_client, "ledger")
    url = f"queues/ledger/jobs/{job_id}/cancel/"
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        read_only = await post(client, url)
    assert read_only.status_code == 403 and "Read-only" in read_only.json()["error"]
    per_queue = {**bullpen_settings, "QUEUE_OPTIONS": {"ledger": {"read_only": True}}}
    with override_settings(BULLPEN=per_queue):
        assert (await post(client, url)).status_code == 403
    users = {"amy": "amy-pass"}
    hidden = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    hidden.update(
        BASIC_AUTH_PLAIN=users,
        BASIC_AUTH_SCOPES={"amy": ["t1"]},
        QUEUE_ACCESS=[{"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["scope:t1"]}],
    )
    amy = {"Authorization": "Basic " + base64.b64encode(b"amy:amy-pass").decode()}
    with override_settings(BULLPEN=hidden):
        unseen = await client.post(f"/queues/api/{url}", headers=amy)
    assert unseen.status_code == 404 and "ledger" in unseen.json()["error"]
    missing = await post(client, "queues/ledger/jobs/no-such-job/cancel/")
    assert missing.status_code == 404
    assert await active(redis_client, "ledger", job_id)
    statuses = [e.status async for e in AuditEntry.objects.filter(action="cancel")]
    assert sorted(statuses) == [403, 403, 404, 404]


async def test_a_finished_job_answers_409_with_its_state(client: AsyncClient, peer: Peer) -> None:
    added = await node(peer, "add", "--queue", "done", "--name", "n", "--data", "{}")
    await node(peer, "work", "--queue", "done", "--count", "1")
    response = await post(client, f"queues/done/jobs/{added['id']}/cancel/", {}, **AUTH)
    assert response.status_code == 409
    assert response.json()["error"] == (
        f"Job {str(added['id'])!r} is completed; only an active job can be cancelled"
    )
