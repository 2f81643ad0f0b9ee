"""The worker runner through a Redis restart (real processes, a real redis-server that keeps
its data): a handler that finished while Redis was away is recorded once Redis is back, not
run a second time; no job is lost; SIGTERM names the jobs it leaves active."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from pathlib import Path
from typing import Any

from django.test import override_settings

from queues.runner import Producer, default_registry
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import WorkerProcess, lines_of, wait_for

QUEUE = "proc-deliver"


async def _add(
    server: RedisServer,
    settings: dict[str, Any],
    lines: Path,
    count: int,
    *,
    queue: str = QUEUE,
    sleep: float = 1.5,
    log: bool = True,
) -> list[str]:
    with override_settings(BULLPEN={**settings, "REDIS_URL": server.url}):
        async with Producer(default_registry) as producer:
            return [
                # Every other handler also writes a log line after its delivery.
                await producer.add(
                    queue, "post", {"lines": str(lines), "sleep": sleep, "log": log and n % 2 == 0}
                )
                for n in range(count)
            ]


async def test_a_restart_mid_job_delivers_each_job_once(
    durable_redis: RedisServer, bullpen_settings: dict[str, Any], tmp_path: Path
) -> None:
    lines = tmp_path / "deliveries.txt"
    ids = await _add(durable_redis, bullpen_settings, lines, 8)
    check = durable_redis.client()
    worker = WorkerProcess(durable_redis.url, tmp_path / "worker.log", QUEUE)
    try:
        await worker.wait_started()

        async def five_running() -> bool:
            return len(lines_of(lines, "started")) >= 5

        await wait_for("five handlers running", five_running)
        durable_redis.stop()

        async def five_delivered() -> bool:
            return len(lines_of(lines, "delivered")) >= 5

        # They finish while Redis is away, and it stays away longer than a client's own
        # reconnection attempts: only the worker's retries while the lock lasts record them.
        await wait_for("five deliveries while Redis is away", five_delivered, limit_s=10)
        await asyncio.sleep(4.5)
        durable_redis.start()

        async def all_completed() -> bool:
            return int(check.zcard(f"bull:{QUEUE}:completed")) == len(ids)

        await wait_for("every job completed", all_completed, limit_s=25)
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0
    finally:
        worker.stop()
        check.close()
    delivered = Counter(lines_of(lines, "delivered"))
    assert sorted(delivered) == sorted(ids)  # none lost
    assert set(delivered.values()) == {1}  # none delivered twice
    assert not worker.events("stalled")
    assert worker.events("stopped")[0]["abandoned"] == 0


async def test_sigterm_names_a_job_whose_end_could_not_be_recorded(
    durable_redis: RedisServer, bullpen_settings: dict[str, Any], tmp_path: Path
) -> None:
    lines = tmp_path / "deliveries.txt"
    queue = "proc-deliver-brief"  # a 2 s lock: the outage below outlasts it
    [job_id] = await _add(
        durable_redis, bullpen_settings, lines, 1, queue=queue, sleep=0.3, log=False
    )
    worker = WorkerProcess(
        durable_redis.url, tmp_path / "worker.log", queue, "--shutdown-timeout", "1"
    )
    try:
        await worker.wait_started()

        async def running() -> bool:
            return lines_of(lines, "started") == [job_id]

        await wait_for("the handler running", running)
        durable_redis.stop()

        async def given_up() -> bool:
            return any(event.get("job_id") == job_id for event in worker.events("error"))

        # Its end could not be recorded before its lock ran out: the worker gives up on it.
        await wait_for("the worker to give up recording it", given_up, limit_s=10)
        assert lines_of(lines, "delivered") == [job_id]
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 1  # it left a job behind
    finally:
        worker.stop()
    assert [event["job_id"] for event in worker.events("abandoned")] == [job_id]
    assert worker.events("stopped")[0]["abandoned"] == 1
    durable_redis.start()
    check = durable_redis.client()
    try:
        # Still active, for another worker to take over as stalled.
        assert check.lrange(f"bull:{queue}:active", 0, -1) == [job_id]
    finally:
        check.close()
