"""The runner in this process against a real redis-server: handlers, retries, dead letters,
defaults for foreign jobs, progress and logs, idempotent ids, JSON logs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bullmq import UnrecoverableError

from queues.runner import (
    JobContext,
    Producer,
    QueueOptions,
    Registry,
    SyncJobContext,
    business_job_id,
)
from tests.support.worker_fixtures import JsonLines, Runners, job_hash, wait_for

FAST = QueueOptions(attempts=3, backoff_ms=10)


async def finished(client: Any, queue: str, count: int, state: str = "completed") -> bool:
    return int(client.zcard(f"bull:{queue}:{state}")) >= count


async def test_handlers_run_with_payload_and_return_values(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    seen: list[Any] = []
    registry = Registry()

    @registry.handler("sums", FAST)
    async def add(payload: dict[str, int]) -> int:
        seen.append(payload)
        return payload["a"] + payload["b"]

    @registry.handler("words", FAST)
    def shout(payload: str) -> str:  # a plain function: runs in a thread
        return payload.upper()

    async with Producer(registry) as producer:
        ids = [await producer.add("sums", "add", {"a": n, "b": 1}) for n in range(20)]
        word = await producer.add("words", "shout", "quiet")
    await runners.start(registry)
    await wait_for("20 sums", lambda: finished(redis_client, "sums", 20))
    await wait_for("the word", lambda: finished(redis_client, "words", 1))

    assert sorted(p["a"] for p in seen) == list(range(20))
    assert [json.loads(job_hash(redis_client, "sums", i)["returnvalue"]) for i in ids] == [
        n + 1 for n in range(20)
    ]
    assert json.loads(job_hash(redis_client, "words", word)["returnvalue"]) == "QUIET"
    await runners.stop_all()
    # The producer's defaults are on every job.
    opts = json.loads(job_hash(redis_client, "sums", ids[0])["opts"])
    assert opts["attempts"] == 3
    assert opts["backoff"] == {"type": "exponential", "delay": 10}
    assert opts["removeOnComplete"] == {"count": 1000}
    assert opts["removeOnFail"] == {"count": 5000}

    completed = json_logs.events("completed")
    assert len(completed) == 21
    first = next(line for line in completed if line["job_id"] == ids[0])
    assert first["queue"] == "sums"
    assert first["name"] == "add"
    assert first["attempt"] == 1
    assert first["duration_ms"] >= 0
    assert {line["job_id"] for line in json_logs.events("active")} >= set(ids)
    assert {line["job_id"] for line in json_logs.events("added")} >= set(ids)


async def test_retries_then_success_are_not_dead(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    registry = Registry()
    attempts: list[int] = []

    @registry.handler("flaky", FAST)
    async def flaky(payload: Any, ctx: JobContext) -> str:
        attempts.append(ctx.attempt)
        if ctx.attempt < 3:
            raise RuntimeError(f"upstream 503 on attempt {ctx.attempt}")
        return "ok"

    async with Producer(registry) as producer:
        job_id = await producer.add("flaky", "call", {})
    await runners.start(registry)
    await wait_for("the flaky job", lambda: finished(redis_client, "flaky", 1))

    assert attempts == [1, 2, 3]
    fields = job_hash(redis_client, "flaky", job_id)
    assert fields["atm"] == "3"
    await runners.stop_all()
    failed = json_logs.events("failed")
    assert [(line["attempt"], line["final"]) for line in failed] == [(1, False), (2, False)]
    assert failed[0]["retry_in_ms"] == 10  # exponential from 10 ms: 10, then 20
    assert failed[1]["retry_in_ms"] == 20
    assert json_logs.events("dead-lettered") == []
    assert redis_client.exists("bull:dead-letter:id") == 0


async def test_final_failure_goes_to_the_dead_letter_queue(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    registry = Registry()

    @registry.handler("payments", FAST)
    async def charge(payload: dict[str, Any]) -> None:
        raise ValueError(f"card declined: {payload['card']}")

    @registry.handler("imports", FAST)
    async def parse(payload: Any) -> None:
        raise UnrecoverableError("not a CSV file")  # no retry: dead at once

    async with Producer(registry) as producer:
        job_id = await producer.add("payments", "charge", {"card": "4242"}, job_id="charge-7")
        await producer.add("imports", "parse", {"file": "x.bin"}, job_id="import-1")
    await runners.start(registry)
    await wait_for("the failed charge", lambda: finished(redis_client, "payments", 1, "failed"))
    await wait_for("the failed import", lambda: finished(redis_client, "imports", 1, "failed"))

    fields = job_hash(redis_client, "payments", job_id)
    assert fields["failedReason"] == "card declined: 4242"
    assert fields["atm"] == "3"
    assert len(json.loads(fields["stacktrace"])) == 3

    dead = job_hash(redis_client, "dead-letter", "payments.charge-7")
    assert dead["name"] == "charge"
    letter = json.loads(dead["data"])
    assert letter["queue"] == "payments"
    assert letter["prefix"] == "bull"
    assert letter["jobId"] == "charge-7"
    assert letter["data"] == {"card": "4242"}
    assert letter["failedReason"] == "card declined: 4242"
    assert letter["attemptsMade"] == 3
    assert "ValueError: card declined" in letter["stacktrace"]
    assert letter["opts"]["attempts"] == 3
    assert sorted(redis_client.lrange("bull:dead-letter:wait", 0, -1)) == [
        "imports.import-1",
        "payments.charge-7",
    ]
    imported = json.loads(job_hash(redis_client, "dead-letter", "imports.import-1")["data"])
    assert imported["attemptsMade"] == 1

    await runners.stop_all()
    finals = [line for line in json_logs.events("failed") if line["final"]]
    assert {line["job_id"] for line in finals} == {"charge-7", "import-1"}
    assert len([line for line in json_logs.events("failed") if not line["final"]]) == 2
    dead_lines = json_logs.events("dead-lettered")
    assert {line["dead_letter_id"] for line in dead_lines} == {
        "payments.charge-7",
        "imports.import-1",
    }


async def test_jobs_from_other_producers_get_the_queue_defaults(
    runners: Runners, redis_client: Any
) -> None:
    registry = Registry()
    calls = 0

    @registry.handler("foreign", QueueOptions(attempts=4, backoff_ms=5))
    async def always_fails(payload: Any) -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("nope")

    # Added the way a service that knows nothing of the runner would: no attempts, no backoff.
    async with Producer(Registry()) as plain:
        await plain.queue("foreign").add("bare", {"n": 1}, {})
    await runners.start(registry)
    await wait_for("the foreign job to die", lambda: finished(redis_client, "foreign", 1, "failed"))
    assert calls == 4
    assert redis_client.exists("bull:dead-letter:foreign.1") == 1


async def test_progress_and_logs_are_written_through_bullmq(
    runners: Runners, redis_client: Any
) -> None:
    registry = Registry()

    @registry.handler("reports", FAST)
    async def build(payload: Any, ctx: JobContext) -> None:
        await ctx.log("loading rows")
        await ctx.progress(50)
        await ctx.log("rendering")
        await ctx.progress({"percentage": 100, "stage": "done"})

    @registry.handler("thumbs", FAST)
    def thumb(payload: Any, ctx: SyncJobContext) -> None:
        for pct in (25, 50, 75, 100):
            ctx.progress(pct)
        ctx.log(f"made {ctx.name} for {ctx.job_id} (attempt {ctx.attempt}/{ctx.max_attempts})")

    async with Producer(registry) as producer:
        report = await producer.add("reports", "build", {})
        image = await producer.add("thumbs", "small", {})
    await runners.start(registry)
    await wait_for("both jobs", lambda: finished(redis_client, "reports", 1))
    await wait_for("both jobs", lambda: finished(redis_client, "thumbs", 1))

    assert json.loads(job_hash(redis_client, "reports", report)["progress"]) == {
        "percentage": 100,
        "stage": "done",
    }
    assert redis_client.lrange(f"bull:reports:{report}:logs", 0, -1) == [
        "loading rows",
        "rendering",
    ]
    assert job_hash(redis_client, "thumbs", image)["progress"] == "100"
    assert redis_client.lrange(f"bull:thumbs:{image}:logs", 0, -1) == [
        f"made small for {image} (attempt 1/3)"
    ]


async def test_a_return_value_that_is_not_json_fails_the_attempt(
    runners: Runners, redis_client: Any
) -> None:
    registry = Registry()

    @registry.handler("odd", QueueOptions(attempts=1))
    async def odd(payload: Any) -> object:
        return {1, 2}

    async with Producer(registry) as producer:
        job_id = await producer.add("odd", "set", {})
    await runners.start(registry)
    await wait_for("the failure", lambda: finished(redis_client, "odd", 1, "failed"))
    assert "not JSON" in job_hash(redis_client, "odd", job_id)["failedReason"]


async def test_business_ids_make_enqueueing_idempotent(redis_client: Any) -> None:
    job_id = business_job_id("email", 42, "weekly", "2026-11-30")
    assert job_id == "email.42.weekly.2026-11-30"
    async with Producer(Registry()) as producer:
        first = await producer.add("newsletter", "send", {"user": 42}, job_id=job_id)
        second = await producer.add("newsletter", "send", {"user": 42, "again": 1}, job_id=job_id)
    assert first == second == job_id
    assert redis_client.llen("bull:newsletter:wait") == 1
    assert json.loads(job_hash(redis_client, "newsletter", job_id)["data"]) == {"user": 42}


async def test_stop_waits_for_running_jobs_and_closes_connections(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    registry = Registry()
    release = asyncio.Event()

    @registry.handler("held", FAST)
    async def held(payload: Any) -> str:
        await release.wait()
        return "done"

    async with Producer(registry) as producer:
        for n in range(3):
            await producer.add("held", "wait", {"n": n})
    runner = await runners.start(registry)
    await wait_for("3 active jobs", lambda: _active(redis_client, "held", 3))
    stopping = asyncio.ensure_future(runners.stop(runner, grace_s=10))
    await asyncio.sleep(0.2)
    assert not stopping.done()  # still draining
    release.set()
    assert await stopping == []
    assert redis_client.zcard("bull:held:completed") == 3
    names = [c["name"] for c in redis_client.client_list()]
    assert not any(name.startswith("bull:held") for name in names)
    events = [line["event"] for line in json_logs.events()]
    assert events[-5:] == ["draining", "completed", "completed", "completed", "stopped"]


async def _active(client: Any, queue: str, count: int) -> bool:
    return int(client.llen(f"bull:{queue}:active")) >= count


async def test_the_drain_deadline_abandons_jobs_for_stall_recovery(
    runners: Runners, redis_client: Any, json_logs: JsonLines
) -> None:
    registry = Registry()

    @registry.handler("stuck", FAST)
    async def stuck(payload: Any) -> None:
        await asyncio.sleep(3600)

    async with Producer(registry) as producer:
        job_id = await producer.add("stuck", "forever", {})
    runner = await runners.start(registry)
    await wait_for("the active job", lambda: _active(redis_client, "stuck", 1))
    assert await runners.stop(runner, grace_s=0.2) == [job_id]
    # Left active, lock still set (another worker recovers it once the lock expires).
    assert redis_client.lrange("bull:stuck:active", 0, -1) == [job_id]
    assert [line["job_id"] for line in json_logs.events("abandoned")] == [job_id]


async def test_worker_connections_are_named_per_queue(runners: Runners, redis_client: Any) -> None:
    registry = Registry()

    @registry.handler("named", FAST)
    async def noop(payload: Any) -> None:
        return None

    runner = await runners.start(registry, name="host-1")
    names = {c["name"] for c in redis_client.client_list()}
    assert "bull:named:w:host-1" in names
    await runners.stop(runner)
