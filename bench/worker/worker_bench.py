"""Worker runner benchmark: no-op jobs per second of the Python runner vs a Node BullMQ worker
at the same concurrency on the same Redis, and how much of a limiter's configured rate each
worker delivers (the runner, the Python package's own Worker, Node's Worker).

    .venv/bin/python bench/worker/worker_bench.py                 # about 3 minutes
    .venv/bin/python bench/worker/worker_bench.py --jobs 20000 --rounds 5 --redis redis://...

Prints a Markdown report (bench/RESULTS.md keeps dated copies). Needs ``redis-server`` and
``node`` with tests/interop installed (``./run test`` does it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PEER = ROOT / "tests" / "interop" / "peer.mjs"
# The runner's JSON lines are formatted and written, as in production (here to /dev/null).
DEVNULL = open(os.devnull, "w")
TIMES = "\N{MULTIPLICATION SIGN}"
THROUGHPUT_HEAD = (
    "| concurrency | Python runner jobs/s | Node BullMQ jobs/s | runner / Node (paired) "
    "| CPU µs/job, runner | CPU µs/job, Node | Python bullmq Worker as is, jobs/s |\n"
    "|---:|---:|---:|---:|---:|---:|---:|"
)


def setup_django(redis_url: str) -> None:
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=["queues"],
        BULLPEN={"REDIS_URL": redis_url, "PREFIXES": ["bull"]},
        USE_TZ=True,
    )
    django.setup()


def sync_client(redis_url: str) -> Any:
    import redis

    return redis.Redis.from_url(redis_url, decode_responses=True)


async def _noop(payload: Any) -> None:
    return None


async def seed(queue: str, jobs: int) -> None:
    """Add ``jobs`` no-op jobs through bullmq, 500 per call, as a producer would."""
    from queues.runner import Producer, QueueOptions, Registry

    registry = Registry()
    registry.register(queue, _noop, QueueOptions(attempts=1, remove_on_complete=jobs))
    async with Producer(registry) as producer:
        opts = producer.job_options(queue)
        for start in range(0, jobs, 500):
            numbers = range(start, min(jobs, start + 500))
            batch = [{"name": "noop", "data": {"n": n}, "opts": opts} for n in numbers]
            await producer.queue(queue).addBulk(batch)


# ------------------------------------------------------------------------ throughput


async def python_runner(queue: str, jobs: int, concurrency: int) -> dict[str, float]:
    from queues.runner import QueueOptions, Registry
    from queues.runner.json_logs import configure_json_logs
    from queues.runner.supervisor import WorkerRunner

    configure_json_logs(DEVNULL)
    registry = Registry()
    options = QueueOptions(attempts=1, concurrency=concurrency, remove_on_complete=jobs)
    registry.register(queue, _noop, options)
    runner = WorkerRunner(registry, shutdown_timeout=10)
    done = asyncio.Event()
    count = 0

    def completed(*_: Any) -> None:
        nonlocal count
        count += 1
        if count >= jobs:
            done.set()

    cpu = time.process_time()
    started = time.perf_counter()
    await runner.start()
    runner.workers[0].on("completed", completed)
    await done.wait()
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    await runner.stop()
    return {"jobs_per_s": jobs / elapsed, "cpu_us_per_job": cpu / jobs * 1e6}


async def package_worker(queue: str, jobs: int, concurrency: int) -> dict[str, float]:
    """The Python package's own Worker, as its documentation shows it (plus no socket timeout,
    without which it stalls): for comparison."""
    from bullmq import Worker

    from queues.redis.clients import new_client

    async def noop(job: Any, token: str) -> None:
        return None

    done = asyncio.Event()
    count = 0

    def completed(*_: Any) -> None:
        nonlocal count
        count += 1
        if count >= jobs:
            done.set()

    started = time.perf_counter()
    opts = {"connection": new_client(blocking=True), "concurrency": concurrency}
    worker = Worker(queue, noop, opts)
    worker.on("completed", completed)
    await done.wait()
    elapsed = time.perf_counter() - started
    await worker.close()
    return {"jobs_per_s": jobs / elapsed}


def node_worker(
    redis_url: str, queue: str, concurrency: int, *, count: int = 0, limited: str = ""
) -> dict[str, float]:
    """``limited``: "max/duration_ms/run_ms" (run that long with BullMQ's limiter)."""
    args = ["node", str(PEER), "bench-work", "--redis", redis_url, "--queue", queue]
    args += ["--concurrency", str(concurrency), "--deadline-ms", "600000"]
    if limited:
        limit_max, window, run_ms = limited.split("/")
        args += ["--limiter-max", limit_max, "--limiter-duration", window, "--duration-ms", run_ms]
    else:
        args += ["--count", str(count)]
    out = subprocess.run(args, capture_output=True, text=True, check=True, timeout=900)
    result = json.loads(out.stdout)
    return {
        "jobs_per_s": result["processed"] / (result["elapsed_ms"] / 1000),
        "cpu_us_per_job": result["cpu_ms"] * 1000 / max(1, result["processed"]),
    }


def throughput(redis_url: str, client: Any, args: argparse.Namespace) -> None:
    print(f"\nNo-op jobs, {args.jobs} per run, median of {args.rounds} alternating runs:\n")
    print(THROUGHPUT_HEAD)
    for concurrency in args.concurrency:
        py: list[dict[str, float]] = []
        js: list[dict[str, float]] = []
        package: dict[str, float] = {}
        for round_ in range(args.rounds):
            client.flushall()
            asyncio.run(seed("bench-py", args.jobs))
            py.append(asyncio.run(python_runner("bench-py", args.jobs, concurrency)))
            client.flushall()
            asyncio.run(seed("bench-node", args.jobs))
            js.append(node_worker(redis_url, "bench-node", concurrency, count=args.jobs))
            if round_ == 0:
                client.flushall()
                asyncio.run(seed("bench-package", args.jobs))
                package = asyncio.run(package_worker("bench-package", args.jobs, concurrency))
            ours, theirs = py[-1]["jobs_per_s"], js[-1]["jobs_per_s"]
            print(
                f"  c={concurrency} round {round_ + 1}: {ours:.0f} vs {theirs:.0f}", file=sys.stderr
            )
        p = statistics.median(r["jobs_per_s"] for r in py)
        n = statistics.median(r["jobs_per_s"] for r in js)
        # The machine's load drifts: compare each Python run with the Node run next to it.
        pairs = zip(py, js, strict=True)
        ratio = statistics.median(a["jobs_per_s"] / b["jobs_per_s"] for a, b in pairs)
        pc = statistics.median(r["cpu_us_per_job"] for r in py)
        nc = statistics.median(r["cpu_us_per_job"] for r in js)
        plain = package["jobs_per_s"]
        print(
            f"| {concurrency} | {p:,.0f} | {n:,.0f} | {ratio:.2f}{TIMES} | {pc:.0f} | {nc:.0f} "
            f"| {plain:,.0f} |"
        )


# --------------------------------------------------------------------------- limiter


def delivered(redis_url: str, queue: str, window_ms: int) -> int:
    """Jobs started within ``window_ms`` of the first one (BullMQ's processedOn stamps)."""
    client = sync_client(redis_url)
    ids = client.zrange(f"bull:{queue}:completed", 0, -1)
    with client.pipeline() as pipe:
        for job_id in ids:
            pipe.hget(f"bull:{queue}:{job_id}", "processedOn")
        stamps = sorted(int(s) for s in pipe.execute())
    return sum(1 for s in stamps if s < stamps[0] + window_ms) if stamps else 0


async def limited_runner(queue: str, limit_max: int, window: int, run_ms: int) -> None:
    from queues.runner import Limiter, QueueOptions, Registry
    from queues.runner.supervisor import WorkerRunner

    registry = Registry()
    options = QueueOptions(attempts=1, concurrency=10, remove_on_complete=100_000)
    registry.register(queue, _noop, options, limiter=Limiter(limit_max, window))
    runner = WorkerRunner(registry, shutdown_timeout=10)
    await runner.start()
    await asyncio.sleep(run_ms / 1000)
    await runner.stop()


async def limited_package_worker(queue: str, limit_max: int, window: int, run_ms: int) -> None:
    """The Python package's own Worker, with the socket-timeout pitfall avoided."""
    from bullmq import Worker

    from queues.redis.clients import new_client

    async def noop(job: Any, token: str) -> None:
        return None

    opts = {
        "connection": new_client(blocking=True),
        "concurrency": 10,
        "limiter": {"max": limit_max, "duration": window},
        "removeOnComplete": {"count": 100_000},
    }
    worker = Worker(queue, noop, opts)
    await asyncio.sleep(run_ms / 1000)
    await worker.close()


def limiter(redis_url: str, client: Any, args: argparse.Namespace) -> None:
    limit_max, window = (int(x) for x in args.limiter.split("/"))
    run_ms = int(args.limiter_seconds * 1000)
    rate = limit_max * 1000 / window
    print(f"\nLimiter `{{max: {limit_max}, duration: {window}}}` ({rate:g} jobs/s), concurrency")
    print(
        f"10, a backlog of jobs; jobs started in the {args.limiter_seconds:g} s after the first:\n"
    )
    print("| worker | jobs started | jobs/s | of configured rate |\n|---|---:|---:|---:|")
    backlog = int(rate * args.limiter_seconds * 2) + 100
    # Each runs a little longer than the window counted, so that no run ends inside it.
    long_ms = run_ms + 500

    def node(queue: str) -> None:
        node_worker(redis_url, queue, 10, limited=f"{limit_max}/{window}/{long_ms}")

    def python(run: Callable[[str, int, int, int], Awaitable[None]]) -> Callable[[str], None]:
        return lambda queue: asyncio.run(run(queue, limit_max, window, long_ms))

    cases: list[tuple[str, Callable[[str], None]]] = [
        ("Python runner (queues/runner)", python(limited_runner)),
        ("Python bullmq 3.4.4 Worker", python(limited_package_worker)),
        ("Node BullMQ 6.7.0 Worker", node),
    ]
    for label, run in cases:
        client.flushall()
        asyncio.run(seed("bench-limited", backlog))
        run("bench-limited")
        count = delivered(redis_url, "bench-limited", run_ms)
        per_s = count / args.limiter_seconds
        print(f"| {label} | {count} | {per_s:.1f} | {per_s / rate:.0%} |")


# ---------------------------------------------------------------------------- main


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    python = platform.python_version()
    return f"{os.cpu_count()} cores, {cpu}, Linux {platform.release()}, Python {python}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--redis", help="a Redis to use (default: a throw-away redis-server)")
    parser.add_argument("--jobs", type=int, default=10_000, help="no-op jobs per throughput run")
    parser.add_argument("--rounds", type=int, default=3, help="alternating Python/Node runs")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--limiter", default="50/1000", help="max/duration_ms")
    parser.add_argument("--limiter-seconds", type=float, default=10.0)
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args()

    server = None
    redis_url = args.redis
    if redis_url is None:
        from tests.support.servers.redis_server import RedisServer

        server = RedisServer()
        server.start()
        redis_url = server.url
    setup_django(redis_url)
    client = sync_client(redis_url)
    version = client.info("server")["redis_version"]
    try:
        stamp = time.strftime("%Y-%m-%d %H:%M")
        print(f"# Worker runner bench, {stamp}: {machine()}, Redis {version}")
        if not args.skip_throughput:
            throughput(redis_url, client, args)
        limiter(redis_url, client, args)
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
