"""The runner's limits on a job and on itself: a queue's ``timeout`` fails an attempt that runs
too long (an ``async def`` handler cancelled, a plain function left to end in its thread), with
the job's retries after it; ``max_memory_mb`` drains a worker process whose memory grew and ends
it with its own exit status, for a supervisor to start a fresh one. Node BullMQ reads the
jobs' ends."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from queues.runner import Producer, QueueOptions, Registry, default_registry
from queues.runner.memory import EXIT_OVER_MEMORY
from tests.support.peer import Peer
from tests.support.worker_fixtures import JsonLines, Runners, WorkerProcess, wait_for

TIMED = QueueOptions(attempts=2, backoff_ms=10, timeout=0.5)
REASON = "timed out after 0.5 s (the queue's timeout)"


async def failed(client: Any, queue: str) -> bool:
    return int(client.zcard(f"bull:{queue}:failed")) >= 1


async def test_a_hung_async_handler_times_out_is_cancelled_and_retried(
    runners: Runners, redis_client: Any, peer: Peer, json_logs: JsonLines
) -> None:
    registry = Registry()
    started: list[int] = []
    cancelled: list[int] = []

    @registry.handler("hangs", TIMED)
    async def hang(payload: Any, ctx: Any) -> None:
        started.append(ctx.attempt)
        try:
            await asyncio.Event().wait()  # never set: hung, its lock renewed meanwhile
        except asyncio.CancelledError:
            cancelled.append(ctx.attempt)
            raise

    async with Producer(registry) as producer:
        job_id = await producer.add("hangs", "h", {})
    await runners.start(registry)
    await wait_for("the job to fail", lambda: failed(redis_client, "hangs"))
    status = await asyncio.to_thread(peer, "job-status", "--queue", "hangs", "--id", job_id)
    assert (status["state"], status["attemptsMade"], status["failedReason"]) == (
        "failed",
        2,
        REASON,
    )
    assert started == cancelled == [1, 2]
    # The first attempt's failure was a retry like any other, the second one final.
    ends = [(e["attempt"], e["final"], e["error"]) for e in json_logs.events("failed")]
    assert ends == [(1, False, REASON), (2, True, REASON)]


async def test_a_hung_plain_function_fails_its_attempt_and_runs_on_in_its_thread(
    runners: Runners, redis_client: Any, peer: Peer
) -> None:
    registry = Registry()
    release = threading.Event()
    ended: list[str] = []

    @registry.handler("blocks", TIMED.with_changes(attempts=1))
    def block(payload: Any) -> str:
        release.wait(60)  # a blocking call with no timeout of its own
        ended.append("returned")
        return "too late"

    async with Producer(registry) as producer:
        job_id = await producer.add("blocks", "b", {})
    await runners.start(registry)
    await wait_for("the job to fail", lambda: failed(redis_client, "blocks"))
    status = await asyncio.to_thread(peer, "job-status", "--queue", "blocks", "--id", job_id)
    assert (status["state"], status["failedReason"]) == ("failed", REASON)
    assert ended == []  # still running: a thread cannot be stopped from outside
    release.set()

    async def returned() -> bool:
        return ended == ["returned"]

    await wait_for("the function to return", returned)
    # What it returned late is dropped: the job stays failed.
    status = await asyncio.to_thread(peer, "job-status", "--queue", "blocks", "--id", job_id)
    assert status["state"] == "failed"


Start = Callable[..., WorkerProcess]


async def state_of(peer: Peer, job_id: str) -> str:
    status = await asyncio.to_thread(peer, "job-status", "--queue", "proc-leak", "--id", job_id)
    return str(status["state"])


async def test_a_worker_over_its_memory_ceiling_drains_and_exits_to_be_restarted(
    worker_processes: Start, redis_client: Any, peer: Peer
) -> None:
    async with Producer(default_registry) as producer:
        slow = await producer.add("proc-leak", "slow", {"sleep": 2})
        leaky = await producer.add("proc-leak", "leaky", {"to_mb": 450})
        rest = [await producer.add("proc-leak", "later", {"sleep": 0.5}) for _ in range(10)]
    worker = worker_processes("--max-memory-mb", "400", "proc-leak")
    await worker.wait_started()
    code = await asyncio.to_thread(worker.wait, 60)
    assert code == EXIT_OVER_MEMORY, worker.log.read_text()[-3000:]
    (over,) = worker.events("over-memory")
    assert over["rss_mb"] > over["max_memory_mb"] == 400
    events = [line["event"] for line in worker.events()]
    assert events.index("over-memory") < events.index("draining") < events.index("stopped")
    # The jobs in flight ran to their end, none left active.
    assert worker.events("stopped")[0]["abandoned"] == 0
    states = {job_id: await state_of(peer, job_id) for job_id in [slow, leaky, *rest]}
    assert states[slow] == states[leaky] == "completed"
    assert "active" not in states.values()
    assert list(states.values()).count("waiting") >= 5
    after = events.index("over-memory")
    taken_after = [line for line in worker.events()[after:] if line["event"] == "active"]
    # Only a finish already on its way to Redis when the drain began may bring back one more
    # job (one per slot: concurrency 2); this worker holds its lock and runs it to its end.
    assert len(taken_after) <= 2, [(e["event"], e.get("job_id")) for e in worker.events()]
    assert all(states[line["job_id"]] == "completed" for line in taken_after)
