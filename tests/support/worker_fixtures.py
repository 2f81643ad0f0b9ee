"""Fixtures for the worker runner's tests, and the handlers its worker processes run.

``manage.py runqueueworker --module tests.support.worker_fixtures`` registers the ``proc-*``
handlers
below (on the default registry); in-process tests build their own :class:`Registry`.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis

from queues.redis.clients import get_client
from queues.runner import Limiter, QueueOptions, Registry, Schedule, job_handler
from queues.runner.json_logs import configure_json_logs, reset_json_logs
from queues.runner.memory import rss_mb
from queues.runner.supervisor import WorkerRunner
from tests.support.browser import on_the_tests_loop
from tests.support.servers.redis_server import RedisServer
from tests.support.servers.server_forks import fork_manage

ROOT = Path(__file__).resolve().parents[2]
RUNS_KEY = "bullpen-test:runs"  # hash: job id -> times a handler started it

# --------------------------------------------------------------- worker-process handlers

# Short locks and stall checks, so that a killed worker's jobs come back within ~2 s.
FAST_RECOVERY = QueueOptions(
    lock_duration_ms=1000, stalled_interval_ms=500, max_stalled_count=3, attempts=1
)


async def _count_run(job_id: str) -> None:
    await get_client().hincrby(RUNS_KEY, job_id, 1)


@job_handler("proc-slow", FAST_RECOVERY, concurrency=5)
async def slow_job(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
    await _count_run(ctx.job_id)
    await asyncio.sleep(float(payload.get("sleep", 1.0)))
    return {"slept": payload.get("sleep", 1.0)}


def chaos_fails(job_id: str, attempt: int) -> bool:
    """Deterministic: about 30% of attempts fail."""
    return zlib.crc32(f"{job_id}:{attempt}".encode()) % 100 < 30


@job_handler(
    "proc-chaos",
    FAST_RECOVERY,
    concurrency=10,
    attempts=3,
    backoff_ms=10,
    remove_on_complete=100_000,
    remove_on_fail=100_000,
)
async def chaos_job(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
    await _count_run(ctx.job_id)
    await asyncio.sleep(0.01)
    if chaos_fails(ctx.job_id, ctx.attempt):
        raise RuntimeError(f"chaos on attempt {ctx.attempt}")
    return {"ok": True}


# The same on a Postgres store (`runqueueworker --connection pg`), with BullMQ's default lock:
# a loaded machine must not let a lock lapse mid-job there either.
job_handler("proc-pg-slow", concurrency=5, attempts=1)(slow_job)


@job_handler("proc-pg", concurrency=3, attempts=2, backoff_ms=10)
async def on_postgres(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Progress and a log line, then ``n`` doubled, or a failure when ``fail`` is given."""
    await ctx.progress(50)
    await ctx.log(f"attempt {ctx.attempt} of {ctx.max_attempts}")
    if payload.get("fail"):
        raise RuntimeError(f"refused {payload['fail']}")
    return {"doubled": int(payload["n"]) * 2}


@job_handler("proc-pg-cancel", concurrency=2, attempts=2, backoff_ms=10)
async def until_cancelled(payload: dict[str, Any], ctx: Any) -> None:
    """Runs a minute, for the dashboard's Cancel to end it (counted each time it starts)."""
    await _count_run(ctx.job_id)
    await asyncio.sleep(60)


@job_handler("proc-pg-nap", attempts=1)
async def nap(payload: dict[str, Any]) -> None:
    """A minute's nap touching nothing but the store: for a site with no Redis at all."""
    await asyncio.sleep(60)


@job_handler(
    "proc-pg-timed",
    limiter=Limiter(max=4, duration_ms=1000),
    schedules=[Schedule(id="tick", name="tick", every_ms=60_000, data={"n": 0})],
)
async def timed(payload: dict[str, Any]) -> int:
    return int(payload.get("n", 0))


# Locks that outlast a Redis restart of a few seconds; stall checks every second.
RESTART_SAFE = QueueOptions(
    lock_duration_ms=10_000, stalled_interval_ms=1000, max_stalled_count=3, attempts=3
)


def _note(path: Path, line: str) -> None:
    with path.open("a") as out:  # one short append: whole lines, whatever runs beside
        out.write(line + "\n")


async def deliver(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Work done outside Redis, as a webhook's POST: a line in a file, then a log line."""
    lines = Path(payload["lines"])
    _note(lines, f"started {ctx.job_id}")
    await asyncio.sleep(float(payload.get("sleep", 1.0)))
    _note(lines, f"delivered {ctx.job_id}")
    if payload.get("log", True):
        await ctx.log("delivered")
    return {"delivered": True}


job_handler("proc-deliver", RESTART_SAFE, concurrency=5)(deliver)
# The same with a 2 s lock: a Redis outage outlasts it.
job_handler("proc-deliver-brief", RESTART_SAFE.with_changes(lock_duration_ms=2000))(deliver)


_KEPT: list[bytes] = []  # what proc-leak holds on to, as a leaking library would


# A long lock: filling hundreds of MiB holds the GIL, and on a loaded machine a one-second lock
# of the job running beside it would lapse meanwhile (the job stalled back to waiting).
@job_handler(
    "proc-leak",
    FAST_RECOVERY.with_changes(lock_duration_ms=30_000, stalled_interval_ms=30_000),
    concurrency=2,
)
async def leak(payload: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Sleeps ``sleep`` s, then holds memory until the process's RSS passes ``to_mb``."""
    await asyncio.sleep(float(payload.get("sleep", 0)))
    short = float(payload.get("to_mb", 0)) - rss_mb()
    if short > 0:
        _KEPT.append(b"\x01" * int((short + 20) * 2**20))  # written: resident, not just mapped
    return {"rss_mb": round(rss_mb())}


def lines_of(path: Path, kind: str) -> list[str]:
    """The job ids of ``deliver``'s lines of one kind, in order."""
    if not path.exists():
        return []
    return [line.split()[1] for line in path.read_text().splitlines() if line.startswith(kind)]


# ------------------------------------------------------------------------- fixtures


async def wait_for(
    what: str,
    check: Callable[[], Awaitable[bool]],
    limit_s: float = 20.0,
    step: float = 0.02,
    seen: Callable[[], str] | None = None,
) -> None:
    """Poll ``check`` until true; fail with ``what`` after ``limit_s`` (a guard, not a claim),
    and with what ``seen`` says was seen meanwhile."""
    deadline = time.monotonic() + limit_s
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}" + (f"; seen: {seen()}" if seen else ""))
        await asyncio.sleep(step)


class JsonLines:
    """The runner's JSON log lines, captured."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    def events(self, event: str | None = None) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in self.stream.getvalue().splitlines() if line]
        return [line for line in lines if event is None or line["event"] == event]


@pytest.fixture
def json_logs() -> Iterator[JsonLines]:
    captured = JsonLines()
    configure_json_logs(captured.stream)
    yield captured
    reset_json_logs()


class Runners:
    """Starts runners for a test and stops whatever is still running at its end."""

    def __init__(self) -> None:
        self.running: list[WorkerRunner] = []

    async def start(self, registry: Registry, *queues: str, **kwargs: Any) -> WorkerRunner:
        runner = WorkerRunner(registry, queues, **kwargs)
        await runner.start()
        self.running.append(runner)
        return runner

    async def stop(self, runner: WorkerRunner, grace_s: float = 5.0) -> list[str]:
        self.running.remove(runner)
        return await runner.stop(grace_s)

    async def stop_all(self) -> None:
        """Stop every runner: after this, every event of every job is logged."""
        for runner in list(self.running):
            await self.stop(runner)


@pytest.fixture
def runners(request: pytest.FixtureRequest) -> Runners:
    """Runners a test starts, on its event loop (a browser test's is the session's)."""
    started: Runners = on_the_tests_loop(request, "runners")
    return started


async def runners_stopped(started: Runners) -> None:
    for runner in list(started.running):
        await started.stop(runner, grace_s=2.0)


@pytest_asyncio.fixture(loop_scope="function")
async def runners_on_test_loop() -> AsyncIterator[Runners]:
    started = Runners()
    yield started
    await runners_stopped(started)


@pytest_asyncio.fixture(loop_scope="session")
async def runners_on_session_loop() -> AsyncIterator[Runners]:
    started = Runners()
    yield started
    await runners_stopped(started)


class WorkerProcess:
    """``manage.py runqueueworker`` in a process of its own, logging JSON lines to a file."""

    def __init__(
        self, redis_url: str, log: Path, *args: str, env: dict[str, str] | None = None
    ) -> None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "BULLPEN_TEST_REDIS_URL": redis_url,
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        }
        self.log = log
        log.write_bytes(b"")
        self.process = fork_manage(["runqueueworker", "--module", __name__, *args], env, ROOT, log)

    def events(self, event: str | None = None) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text().splitlines():
            if line.startswith("{"):
                doc = json.loads(line)
                if event is None or doc.get("event") == event:
                    found.append(doc)
        return found

    async def wait_started(self) -> None:
        async def started() -> bool:
            if self.process.poll() is not None:
                pytest.fail(f"worker exited: {self.log.read_text()[-3000:]}")
            return bool(self.events("started"))

        await wait_for("the worker process to start", started, limit_s=30)

    def signal(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    def wait(self, timeout: float = 30) -> int:
        return self.process.wait(timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture
def worker_processes(
    redis_server: RedisServer, tmp_path: Path
) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start(*args: str) -> WorkerProcess:
        process = WorkerProcess(redis_server.url, tmp_path / f"worker-{len(started)}.log", *args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def job_hash(client: redis.Redis, queue: str, job_id: str) -> dict[str, str]:
    return client.hgetall(f"bull:{queue}:{job_id}")  # type: ignore[no-any-return]
