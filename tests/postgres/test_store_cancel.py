"""Cancel from the API on a PostgreSQL store: ``runqueueworker --connection pg`` hears the
request on the store (``NOTIFY bullpen_cancel``) and fails the job it runs through BullMQ's
Postgres functions, for good or, with ``retry``, as an attempt that runs again, also on a site
with no Redis at all; read back through Node. A job whose worker does not listen is left
running, and the request says so."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.action_requests import post
from tests.support.peer import PostgresPeer
from tests.support.worker_fixtures import RUNS_KEY, WorkerProcess, wait_for

QUEUE = "proc-pg-cancel"


def status(pg_peer: PostgresPeer, queue: str, job_id: str) -> dict[str, Any]:
    return dict(pg_peer("job-status", "--queue", queue, "--id", job_id))


async def running(pg_peer: PostgresPeer, queue: str, job_id: str) -> None:
    async def active() -> bool:
        found = await asyncio.to_thread(status, pg_peer, queue, job_id)
        return bool(found["state"] == "active")

    await wait_for(f"job {job_id} to run", active, limit_s=60)


async def started_runs(redis_client: Any, job_id: str, runs: int) -> None:
    async def counted() -> bool:
        return int(redis_client.hget(RUNS_KEY, job_id) or 0) >= runs

    await wait_for(f"the handler to start {runs} time(s)", counted, limit_s=60)


def add(pg_peer: PostgresPeer, queue: str, job_id: str) -> None:
    opts = json.dumps({"jobId": job_id})
    pg_peer("add", "--queue", queue, "--name", "nap", "--data", "{}", "--opts", opts)


async def test_cancel_fails_the_runners_job_for_good_with_who_cancelled_it(
    client: AsyncClient,
    pg_workers: Callable[..., WorkerProcess],
    pg_peer: PostgresPeer,
    redis_client: Any,
    with_pg: dict[str, Any],
) -> None:
    add(pg_peer, QUEUE, "nap-1")
    worker = pg_workers(QUEUE)
    await worker.wait_started()
    await started_runs(redis_client, "nap-1", 1)
    await running(pg_peer, QUEUE, "nap-1")
    response = await post(client, f"queues/{QUEUE}@pg/jobs/nap-1/cancel/", {"reason": "stuck"})
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert (body["action"], body["jobIds"], body["state"]) == ("cancel", ["nap-1"], "failed")
    reason = "Cancelled by operator from Bullpen: stuck"
    assert body["reason"] == reason
    # For good, though the queue allows two attempts; Node reads the store's own record.
    seen = status(pg_peer, QUEUE, "nap-1")
    assert (seen["state"], seen["failedReason"], seen["attemptsMade"]) == ("failed", reason, 1)
    await asyncio.sleep(0.5)
    assert int(redis_client.hget(RUNS_KEY, "nap-1")) == 1  # it does not run again
    assert status(pg_peer, QUEUE, "nap-1")["state"] == "failed"
    cancelling = [e for e in worker.events() if e["event"] == "cancelling"]
    assert [e["job_id"] for e in cancelling] == ["nap-1"]
    row = await AuditEntry.objects.aget(action="cancel", queue=f"{QUEUE}@pg")
    assert (row.username, row.job_ids, row.status) == ("operator", ["nap-1"], 200)


async def test_cancel_with_retry_runs_the_job_again(
    client: AsyncClient,
    pg_workers: Callable[..., WorkerProcess],
    pg_peer: PostgresPeer,
    redis_client: Any,
    with_pg: dict[str, Any],
) -> None:
    add(pg_peer, QUEUE, "nap-2")
    worker = pg_workers(QUEUE)
    await worker.wait_started()
    await started_runs(redis_client, "nap-2", 1)
    await running(pg_peer, QUEUE, "nap-2")
    url = f"queues/{QUEUE}@pg/jobs/nap-2/cancel/"
    first = await post(client, url, {"retry": "1"})
    assert first.status_code == 200, first.content[:500]
    assert first.json()["retry"] is True and first.json()["state"] != "active"
    # The failed attempt counts; its backoff over, the same worker runs it again.
    await started_runs(redis_client, "nap-2", 2)
    await running(pg_peer, QUEUE, "nap-2")
    assert status(pg_peer, QUEUE, "nap-2")["attemptsMade"] == 1
    second = await post(client, url)
    assert second.status_code == 200, second.content[:500]
    seen = status(pg_peer, QUEUE, "nap-2")
    assert (seen["state"], seen["attemptsMade"]) == ("failed", 2)
    assert seen["failedReason"] == "Cancelled by operator from Bullpen"


async def test_a_worker_that_does_not_listen_keeps_its_job_and_the_request_says_so(
    client: AsyncClient,
    pg_peer: PostgresPeer,
    bullpen_settings: dict[str, Any],
    with_pg: dict[str, Any],
) -> None:
    add(pg_peer, "deaf-pg", "frame-1")
    # Node's own worker on the store: it never LISTENs for Bullpen's requests.
    worked = asyncio.ensure_future(
        asyncio.to_thread(pg_peer, "work", "--queue", "deaf-pg", "--delay-ms", "6000")
    )
    await running(pg_peer, "deaf-pg", "frame-1")
    with override_settings(BULLPEN={**with_pg, "CANCEL_WAIT": 1.0}):
        started = time.monotonic()
        response = await post(client, "queues/deaf-pg@pg/jobs/frame-1/cancel/")
        waited = time.monotonic() - started
    assert response.status_code == 409, response.content[:500]
    assert "still active after 1 s" in response.json()["error"]
    assert waited >= 1.0
    assert status(pg_peer, "deaf-pg", "frame-1")["state"] == "active"
    # Left as it was: its worker finishes it as if nobody had asked.
    await worked
    assert status(pg_peer, "deaf-pg", "frame-1")["state"] == "completed"


async def test_cancel_on_a_site_of_postgresql_stores_alone(
    client: AsyncClient,
    pg_workers: Callable[..., WorkerProcess],
    pg_peer: PostgresPeer,
    bullpen_settings: dict[str, Any],
    postgres_url: str,
    transactional_db: None,
) -> None:
    config = {**bullpen_settings, "CONNECTIONS": {"pg": postgres_url}}
    del config["REDIS_URL"]
    add(pg_peer, "proc-pg-nap", "nap-3")
    worker = pg_workers("proc-pg-nap", alone=True)
    await worker.wait_started()
    await running(pg_peer, "proc-pg-nap", "nap-3")
    with override_settings(BULLPEN=config):
        response = await post(client, "queues/proc-pg-nap/jobs/nap-3/cancel/", {"reason": "x"})
    assert response.status_code == 200, response.content[:500]
    seen = status(pg_peer, "proc-pg-nap", "nap-3")
    assert (seen["state"], seen["failedReason"]) == (
        "failed",
        "Cancelled by operator from Bullpen: x",
    )
