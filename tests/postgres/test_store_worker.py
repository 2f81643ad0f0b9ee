"""``manage.py runqueueworker --connection pg``: the project's handlers run on BullMQ's Postgres
store. Node adds the jobs and reads what the worker left: return values, progress, logs,
retries, the final failure with its dead letter; SIGTERM drains; a store it cannot use is
refused with the reason."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from queues.postgres.urls import parse_postgres_url
from queues.runner import Registry
from queues.runner.dispatch import Dispatcher
from queues.runner.postgres.connection import WorkerConnection
from queues.runner.postgres.dead_letter import dead_letter_queue, fail_finally
from queues.runner.postgres.worker import PostgresRunnerWorker
from tests.support.peer import PostgresPeer
from tests.support.worker_fixtures import RUNS_KEY, WorkerProcess, on_postgres, wait_for

Start = Callable[..., WorkerProcess]


def _add(pg_peer: PostgresPeer, queue: str, job_id: str, data: dict[str, Any]) -> None:
    opts = json.dumps({"jobId": job_id})
    pg_peer("add", "--queue", queue, "--name", "calc", "--data", json.dumps(data), "--opts", opts)


async def test_node_adds_the_worker_works_node_reads(
    pg_workers: Start, pg_peer: PostgresPeer
) -> None:
    for n in range(4):
        _add(pg_peer, "proc-pg", f"ok-{n}", {"n": n})
    _add(pg_peer, "proc-pg", "bad-1", {"fail": "<b>x</b>"})
    worker = pg_workers("proc-pg")
    await worker.wait_started()

    async def finished() -> bool:
        counts = pg_peer("inspect", "--queue", "proc-pg")["counts"]
        return int(counts["completed"]) == 4 and int(counts["failed"]) == 1

    await wait_for("Node to read every job finished", finished, limit_s=60)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0

    ids = ["ok-0", "ok-3", "bad-1"]
    seen = pg_peer("inspect", "--queue", "proc-pg", "--ids", ",".join(ids))
    assert sorted(seen["jobs"]["completed"]) == ["ok-0", "ok-1", "ok-2", "ok-3"]
    done = seen["details"]["ok-3"]
    assert (done["state"], done["returnvalue"], done["progress"]) == (
        "completed",
        {"doubled": 6},
        50,
    )
    assert done["attemptsMade"] == 1 and done["logs"] == ["attempt 1 of 2"]
    # The runner's defaults for a job Node added without attempts: two, then failed for good.
    bad = seen["details"]["bad-1"]
    assert (bad["state"], bad["failedReason"], bad["attemptsMade"]) == (
        "failed",
        "refused <b>x</b>",
        2,
    )
    assert bad["logs"] == ["attempt 1 of 2", "attempt 2 of 2"]
    assert len(bad["stacktrace"]) == 2 and "RuntimeError: refused" in bad["stacktrace"][-1]

    # Its dead letter, in the same store, written with the failure.
    letters = pg_peer("inspect", "--queue", "dead-letter", "--ids", "proc-pg.bad-1")
    assert letters["jobs"]["waiting"] == ["proc-pg.bad-1"]
    letter = letters["details"]["proc-pg.bad-1"]["data"]
    assert (letter["queue"], letter["jobId"], letter["failedReason"]) == (
        "proc-pg",
        "bad-1",
        "refused <b>x</b>",
    )
    assert letter["attemptsMade"] == 2 and letter["data"] == {"fail": "<b>x</b>"}
    events = worker.events()
    assert [line["job_id"] for line in events if line["event"] == "dead-lettered"] == ["bad-1"]
    retried = [line for line in events if line["event"] == "failed" and not line["final"]]
    assert [line["job_id"] for line in retried] == ["bad-1"]


async def test_sigterm_drains_in_flight_jobs(
    pg_workers: Start, pg_peer: PostgresPeer, redis_client: Any
) -> None:
    for n in range(10):
        _add(pg_peer, "proc-pg-slow", f"nap-{n}", {"sleep": 1.5})
    worker = pg_workers("proc-pg-slow")
    await worker.wait_started()

    async def five_active() -> bool:
        return int(pg_peer("inspect", "--queue", "proc-pg-slow")["counts"]["active"]) == 5

    await wait_for("5 active jobs (the queue's concurrency)", five_active, limit_s=30)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
    # The five it held finished; the five it had not taken are still waiting.
    counts = pg_peer("inspect", "--queue", "proc-pg-slow")["counts"]
    assert (counts["completed"], counts["waiting"], counts["active"]) == (5, 5, 0)
    events = [line["event"] for line in worker.events()]
    assert events.index("stop") < events.index("draining") < events.index("stopped")
    assert worker.events("stopped")[0]["abandoned"] == 0

    second = pg_workers("proc-pg-slow")
    await second.wait_started()

    async def all_ten() -> bool:
        return int(pg_peer("inspect", "--queue", "proc-pg-slow")["counts"]["completed"]) == 10

    await wait_for("all 10 completed", all_ten, limit_s=30)
    second.signal(signal.SIGINT)
    assert second.wait() == 0
    runs = redis_client.hgetall(RUNS_KEY)
    assert sorted(runs) == sorted(f"nap-{n}" for n in range(10))
    assert set(runs.values()) == {"1"}  # none run twice


async def test_a_store_it_cannot_use_is_refused_with_the_reason(
    pg_workers: Start, pg_peer: PostgresPeer, postgres_url: str
) -> None:
    _add(pg_peer, "proc-pg", "kept", {"n": 1})  # BullMQ's schema exists in `bullmq` only
    elsewhere = pg_workers("proc-pg", pg_url=f"{postgres_url}?schema=nowhere")
    assert elsewhere.wait() != 0
    text = elsewhere.log.read_text()
    assert "'nowhere'" in text and "migrations" in text and "Traceback" not in text
    down = pg_workers("proc-pg", pg_url="postgresql://bullpen@127.0.0.1:1/bullmq")
    assert down.wait() != 0
    assert "is unreachable" in down.log.read_text()
    assert pg_peer("job-status", "--queue", "proc-pg", "--id", "kept")["state"] == "waiting"


async def test_its_limiter_and_schedulers_work_on_the_store(
    pg_workers: Start, pg_peer: PostgresPeer
) -> None:
    for n in range(12):
        _add(pg_peer, "proc-pg-timed", f"t-{n}", {"n": n})
    worker = pg_workers("proc-pg-timed")
    await worker.wait_started()

    async def thirteen() -> bool:  # the 12 and the scheduler's first job, due at once
        return int(pg_peer("inspect", "--queue", "proc-pg-timed")["counts"]["completed"]) == 13

    await wait_for("13 completed", thirteen, limit_s=60)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
    seen = pg_peer("inspect", "--queue", "proc-pg-timed", "--ids", "t-0,t-11")
    assert seen["details"]["t-11"]["returnvalue"] == 11
    done = seen["jobs"]["completed"]
    details = pg_peer("inspect", "--queue", "proc-pg-timed", "--ids", ",".join(done))["details"]
    starts = sorted(int(details[job_id]["processedOn"]) for job_id in done)
    # At most 4 a second: the ninth start is in the third window of BullMQ's limiter.
    assert starts[8] - starts[0] >= 1950, starts
    tick = pg_peer("scheduler", "--queue", "proc-pg-timed", "--id", "tick")
    assert tick["scheduler"]["every"] == 60_000 and len(tick["nextJobs"]) == 1


async def test_a_dead_letter_is_written_with_the_failure_or_not_at_all(
    pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    _add(pg_peer, "proc-pg", "doomed", {"fail": "x"})
    registry = Registry()
    spec = registry.register("proc-pg", on_postgres, attempts=1)
    own = WorkerConnection(parse_postgres_url(with_pg["CONNECTIONS"]["pg"]))
    worker = PostgresRunnerWorker(
        spec,
        Dispatcher(spec, ThreadPoolExecutor(1)),
        connection=own,
        name="test",
        dead_letters=dead_letter_queue("dead-letter", own),
    )
    try:
        job = await worker.moveToActive("token-1")
        assert job is not None and job.id == "doomed"
        # Another worker's token: BullMQ refuses the failure, and the copy goes with it.
        with pytest.raises(TypeError, match="Lock mismatch"):
            await fail_finally(worker, worker.dead_letters, job, "token-2", RuntimeError("x"))
        assert pg_peer("job-status", "--queue", "proc-pg", "--id", "doomed")["state"] == "active"
        letters = pg_peer("inspect", "--queue", "dead-letter")
        assert sum(letters["countsAll"].values()) == 0
        await fail_finally(worker, worker.dead_letters, job, "token-1", RuntimeError("x"))
        assert pg_peer("job-status", "--queue", "proc-pg", "--id", "doomed")["state"] == "failed"
        assert pg_peer("inspect", "--queue", "dead-letter")["jobs"]["waiting"] == ["proc-pg.doomed"]
    finally:
        await own.close()
