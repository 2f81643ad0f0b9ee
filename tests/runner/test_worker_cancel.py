"""Cancelling a running job of the runner through its queue's cancel channel, as the dashboard
does (queues/actions/cancel.py): an async handler is cancelled, a plain function sees
``ctx.cancelled``; the job fails through BullMQ with the reason, for good unless retried."""

from __future__ import annotations

import asyncio
import functools
import signal
import threading
from pathlib import Path
from typing import Any

from django.test import override_settings

from queues.actions import handles
from queues.actions.cancel import cancel_job
from queues.reads.keys import QueueRef
from queues.runner import (
    JobContext,
    Producer,
    QueueOptions,
    Registry,
    SyncJobContext,
    default_registry,
)
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import (
    JsonLines,
    Runners,
    WorkerProcess,
    job_hash,
    wait_for,
)

THREE_ATTEMPTS = QueueOptions(attempts=3, backoff_ms=10)


async def active(client: Any, queue: str, job_id: str) -> bool:
    return job_id in client.lrange(f"bull:{queue}:active", 0, -1)


async def test_an_async_handler_is_cancelled_and_its_job_fails_for_good(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    registry = Registry()
    seen: list[str] = []

    @registry.handler("crunch", THREE_ATTEMPTS)
    async def crunch(payload: Any, ctx: JobContext) -> None:
        seen.append("started")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async with Producer(registry) as producer:
        job_id = await producer.add("crunch", "crunch", {})
    await runners.start(registry)
    await wait_for("the job to run", lambda: active(redis_client, "crunch", job_id))

    result = await cancel_job(QueueRef("bull", "crunch"), job_id, by="alice", note="wrong input")

    assert result.detail["state"] == "failed"
    assert seen == ["started", "cancelled"]
    stored = job_hash(redis_client, "crunch", job_id)
    assert stored["failedReason"] == "Cancelled by alice from Bullpen: wrong input"
    # Attempts were left (1 of 3), yet no retry: the job stays failed.
    assert stored["atm"] == "1"
    assert await redis_client_state(redis_client, "crunch", job_id) == "failed"
    failed = json_logs.events("failed")
    assert [(line["job_id"], line["final"]) for line in failed] == [(job_id, True)]
    assert [line["job_id"] for line in json_logs.events("cancelling")] == [job_id]


async def test_a_cancel_lost_on_the_way_is_asked_again_until_the_handler_stops(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    # Python 3.11's asyncio.wait_for (redis-py sends every command through it) drops a cancel
    # that lands as what it waits for finishes; this handler drops the first one the same way.
    registry = Registry()
    dropped: list[int] = []

    @registry.handler("deaf-once", THREE_ATTEMPTS)
    async def deaf_once(payload: Any, ctx: JobContext) -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            dropped.append(1)
        await asyncio.sleep(60)

    async with Producer(registry) as producer:
        job_id = await producer.add("deaf-once", "deaf", {})
    await runners.start(registry)
    await wait_for("the job to run", lambda: active(redis_client, "deaf-once", job_id))

    result = await cancel_job(QueueRef("bull", "deaf-once"), job_id, by="dave")

    assert result.detail["state"] == "failed" and dropped == [1]
    assert job_hash(redis_client, "deaf-once", job_id)["failedReason"] == (
        "Cancelled by dave from Bullpen"
    )
    assert [line["job_id"] for line in json_logs.events("cancelling")] == [job_id]


async def redis_client_state(client: Any, queue: str, job_id: str) -> str:
    # Read again a moment later would show a retry moving it; BullMQ records a final failure
    # in the failed set at once, so the set is the state.
    return "failed" if client.zscore(f"bull:{queue}:failed", job_id) is not None else "other"


async def test_a_plain_function_sees_ctx_cancelled(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    registry = Registry()
    noticed = threading.Event()
    release = threading.Event()

    @registry.handler("resize", THREE_ATTEMPTS)
    def resize(payload: Any, ctx: SyncJobContext) -> str:
        while not ctx.cancelled:
            if release.wait(0.01):
                return "done"
        noticed.set()
        return "stopped early"

    async with Producer(registry) as producer:
        job_id = await producer.add("resize", "resize", {})
    await runners.start(registry)
    await wait_for("the job to run", lambda: active(redis_client, "resize", job_id))

    try:
        result = await cancel_job(QueueRef("bull", "resize"), job_id, by="bob")
        assert result.detail["state"] == "failed"
        assert await asyncio.to_thread(noticed.wait, 10)
    finally:
        release.set()  # a function that missed the cancel must not outlive the test
    stored = job_hash(redis_client, "resize", job_id)
    assert stored["failedReason"] == "Cancelled by bob from Bullpen"
    assert "returnvalue" not in stored  # what the function returned after the cancel is dropped


async def test_a_cancel_with_retry_lets_the_attempts_run_it_again(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    registry = Registry()

    @registry.handler("import", THREE_ATTEMPTS)
    async def run_import(payload: Any, ctx: JobContext) -> str:
        if ctx.attempt == 1:
            await asyncio.sleep(60)
        return f"attempt {ctx.attempt}"

    async with Producer(registry) as producer:
        job_id = await producer.add("import", "import", {})
    await runners.start(registry)
    await wait_for("the job to run", lambda: active(redis_client, "import", job_id))

    result = await cancel_job(QueueRef("bull", "import"), job_id, by="carol", retry=True)

    assert result.detail["retry"] is True and result.detail["state"] != "failed"

    async def completed() -> bool:
        return redis_client.zscore("bull:import:completed", job_id) is not None

    await wait_for("the retry to complete", completed)
    stored = job_hash(redis_client, "import", job_id)
    assert stored["returnvalue"] == '"attempt 2"'
    assert stored["atm"] == "2"
    assert [line["final"] for line in json_logs.events("failed")] == [False]


async def test_a_worker_process_hears_cancels_also_after_a_redis_restart(
    durable_redis: RedisServer, bullpen_settings: dict[str, Any], tmp_path: Path
) -> None:
    check = durable_redis.client()
    worker = WorkerProcess(durable_redis.url, tmp_path / "worker.log", "proc-slow")
    ref = QueueRef("bull", "proc-slow")
    try:
        with override_settings(BULLPEN={**bullpen_settings, "REDIS_URL": durable_redis.url}):
            await worker.wait_started()
            for round_ in ("before", "after"):
                async with Producer(default_registry) as producer:
                    job_id = await producer.add("proc-slow", "nap", {"sleep": 60})
                running = functools.partial(active, check, "proc-slow", job_id)
                await wait_for("the job to run", running)
                result = await cancel_job(ref, job_id, by=f"ops-{round_}")
                assert result.detail["state"] == "failed"
                assert check.hget(f"bull:proc-slow:{job_id}", "failedReason") == (
                    f"Cancelled by ops-{round_} from Bullpen"
                )
                if round_ == "before":
                    durable_redis.stop()
                    durable_redis.start()
            await handles.close_current()  # its client knew the server before the restart
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0
    finally:
        worker.stop()
        check.close()
    assert [line["job_id"] for line in worker.events("cancelling")] == ["1", "2"]
