"""Stuck jobs (active, their lock gone: the worker was stopped mid-job and no stalled check ran)
are flagged in the job API, the active tab and the overview's problems; moving one to failed or
back to wait goes through BullMQ's scripts, and Node reads the job as moved and runs it again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import redis.asyncio as aioredis
from bullmq import Job, Worker
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.action_requests import AUTH, node, ok, post
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

HOLDER = "a-live-worker"  # the lock token of the worker that holds a job


async def stranded(peer: Peer, *flags: str) -> str:
    """A job of queue ``mail`` left active by a worker stopped mid-job, its lock expired."""
    found = await node(peer, "strand", "--queue", "mail", "--name", "send", *flags)
    return str(found["ids"][0])


async def node_job(peer: Peer, job_id: str) -> dict[str, Any]:
    found = await node(peer, "inspect", "--queue", "mail", "--ids", job_id)
    return dict(found["details"][job_id])


async def test_a_stranded_job_is_stuck_in_the_api_the_pages_and_the_problems(
    client: AsyncClient, peer: Peer
) -> None:
    job_id = await stranded(peer)
    await node(peer, "add", "--queue", "calm", "--name", "x")
    job = (await client.get(f"/queues/api/queues/mail/jobs/{job_id}/", headers=AUTH)).json()
    assert (job["state"], job["stuck"]) == ("active", True)
    rows = (await client.get("/queues/api/queues/mail/jobs/?state=active", headers=AUTH)).json()[
        "jobs"
    ]
    assert [(row["id"], row["stuck"]) for row in rows] == [(job_id, True)]
    # Rows of other tabs read no lock and carry no flag.
    waiting = (await client.get("/queues/api/queues/calm/jobs/?state=waiting")).json()["jobs"]
    assert "stuck" not in waiting[0]

    tab = (await client.get("/queues/q/mail/?state=active", headers=AUTH)).content.decode()
    assert tab.count('data-testid="row-stuck"') == 1
    page = (await client.get(f"/queues/q/mail/jobs/{job_id}/", headers=AUTH)).content.decode()
    assert 'data-testid="job-stuck"' in page
    assert 'data-testid="move-to-wait"' in page and 'data-testid="move-to-failed"' in page

    problems = (await client.get("/queues/api/queues/?problems=1", headers=AUTH)).json()
    listed = {queue["name"]: queue for queue in problems["queues"]}
    assert listed["mail"]["stuck"] == 1 and "stuck jobs" in listed["mail"]["attention"]
    overview = (await client.get("/queues/", headers=AUTH)).content.decode()
    assert overview.count('data-testid="stuck-jobs"') == 1 and "1 stuck job" in overview


@asynccontextmanager
async def held_job(redis_server: RedisServer) -> AsyncIterator[tuple[Worker, Job]]:
    """A job of ``mail`` taken by a live Python worker, which holds its lock (a minute)."""
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    worker = Worker(
        "mail",
        lambda job, token: asyncio.sleep(0),
        {"connection": connection, "autorun": False, "lockDuration": 60_000},
    )
    try:
        job = await worker.getNextJob(HOLDER)
        assert job is not None
        yield worker, job
    finally:
        await worker.close()
        await connection.aclose()


async def test_an_active_job_its_worker_holds_is_not_stuck_and_can_still_be_failed(
    client: AsyncClient, peer: Peer, redis_server: RedisServer
) -> None:
    await node(peer, "add", "--queue", "mail", "--name", "send")
    async with held_job(redis_server) as (_, job):
        job_id = str(job.id)
        detail = (await client.get(f"/queues/api/queues/mail/jobs/{job_id}/", headers=AUTH)).json()
        assert (detail["state"], detail["stuck"]) == ("active", False)
        rows = (await client.get("/queues/api/queues/mail/jobs/?state=active")).json()["jobs"]
        assert rows[0]["stuck"] is False
        page = (await client.get(f"/queues/q/mail/jobs/{job_id}/", headers=AUTH)).content.decode()
        assert 'data-testid="job-stuck"' not in page and 'data-testid="move-to-wait"' in page

        body = await ok(client, f"queues/mail/jobs/{job_id}/move-to-failed/", {"reason": "hung"})
        assert body["stuck"] is False
        # The worker that held it can no longer finish it: BullMQ refuses its result.
        with pytest.raises(Exception, match="not in the active state"):
            await job.moveToCompleted("late", HOLDER)
    seen = await node_job(peer, job_id)
    assert (seen["state"], seen["failedReason"]) == ("failed", "hung")


async def test_move_a_stuck_job_to_failed(client: AsyncClient, peer: Peer) -> None:
    job_id = await stranded(peer)
    body = await ok(client, f"queues/mail/jobs/{job_id}/move-to-failed/", {"reason": "worker lost"})
    assert body["jobIds"] == [job_id] and body["stuck"] is True
    seen = await node_job(peer, job_id)
    assert (seen["state"], seen["failedReason"]) == ("failed", "worker lost")
    entry = await AuditEntry.objects.aget(action="move-to-failed", status=200)
    assert entry.username == "operator" and entry.job_ids == [job_id]
    # No longer active: refused, naming its state; a job that is not there: 404.
    again = await post(client, f"queues/mail/jobs/{job_id}/move-to-failed/")
    assert again.status_code == 409 and "is failed" in again.json()["error"]
    assert (await post(client, "queues/mail/jobs/nope/move-to-failed/")).status_code == 404


async def test_move_to_failed_without_a_reason_says_where_it_came_from(
    client: AsyncClient, peer: Peer
) -> None:
    job_id = await stranded(peer)
    await ok(client, f"queues/mail/jobs/{job_id}/move-to-failed/")
    seen = await node_job(peer, job_id)
    assert (seen["state"], seen["failedReason"]) == ("failed", "Moved to failed from the dashboard")


async def test_move_a_stuck_job_back_to_wait_and_a_node_worker_runs_it(
    client: AsyncClient, peer: Peer
) -> None:
    job_id = await stranded(peer)
    body = await ok(client, f"queues/mail/jobs/{job_id}/move-to-wait/")
    assert body["jobIds"] == [job_id] and body["stuck"] is True
    assert (await node_job(peer, job_id))["state"] == "waiting"
    again = await post(client, f"queues/mail/jobs/{job_id}/move-to-wait/")
    assert again.status_code == 409 and "is waiting" in again.json()["error"]
    worked = await node(peer, "work", "--queue", "mail", "--count", "1")
    assert worked["completed"] == 1
    assert (await node_job(peer, job_id))["state"] == "completed"


async def test_a_job_that_will_fail_says_so(client: AsyncClient, peer: Peer) -> None:
    job_id = await stranded(peer, "--deferred-failure")
    job = (await client.get(f"/queues/api/queues/mail/jobs/{job_id}/", headers=AUTH)).json()
    assert job["state"] == "waiting"
    assert job["deferredFailure"] == "job stalled more than allowable limit"
    page = (await client.get(f"/queues/q/mail/jobs/{job_id}/", headers=AUTH)).content.decode()
    assert "will fail: job stalled more than allowable limit" in page


async def test_a_read_only_queue_shows_the_flag_without_the_buttons(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    job_id = await stranded(peer)
    config = {**bullpen_settings, "QUEUE_OPTIONS": {"mail": {"read_only": True}}}
    with override_settings(BULLPEN=config):
        page = (await client.get(f"/queues/q/mail/jobs/{job_id}/", headers=AUTH)).content.decode()
        refused = await post(client, f"queues/mail/jobs/{job_id}/move-to-wait/")
    assert 'data-testid="job-stuck"' in page
    assert 'data-testid="move-to-wait"' not in page and 'data-testid="move-to-failed"' not in page
    assert refused.status_code == 403
    assert (await node_job(peer, job_id))["state"] == "active"
