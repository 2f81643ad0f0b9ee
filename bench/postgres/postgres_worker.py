"""The worker runner on BullMQ 6's Postgres store beside a Node BullMQ worker on the same store:
no-op jobs per second at the same concurrency, rounds interleaved (runner and Node alternate
which goes first), each run on a fresh queue Node filled. Run it alone::

    .venv/bin/python bench/postgres/postgres_worker.py --jobs 1000 --rounds 3

It starts its own PostgreSQL 15 (and a redis-server for Bullpen's own state) and prints a
Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers.postgres_server import PostgresServer  # noqa: E402
from tests.support.servers.redis_server import RedisServer  # noqa: E402

PEER = ROOT / "tests" / "interop" / "peer.mjs"
# The runner's JSON lines are formatted and written, as in production (here to /dev/null).
DEVNULL = open(os.devnull, "w")


def peer(pg_url: str, *args: str) -> Any:
    result = subprocess.run(
        ["node", str(PEER), *args, "--postgres", pg_url],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"peer {args[0]} failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout)


async def _noop(payload: Any) -> None:
    return None


async def runner(queue: str, jobs: int, concurrency: int) -> float:
    from queues.runner import QueueOptions, Registry
    from queues.runner.json_logs import configure_json_logs
    from queues.runner.postgres.supervisor import PostgresWorkerRunner

    configure_json_logs(DEVNULL)
    registry = Registry()
    registry.register(queue, _noop, QueueOptions(attempts=1, concurrency=concurrency))
    worker_runner = PostgresWorkerRunner(registry, connection="pg", shutdown_timeout=10)
    done = asyncio.Event()
    count = 0

    def completed(*_: Any) -> None:
        nonlocal count
        count += 1
        if count >= jobs:
            done.set()

    started = time.perf_counter()
    await worker_runner.start()
    worker_runner.pg_workers[0].on("completed", completed)
    await done.wait()
    elapsed = time.perf_counter() - started
    await worker_runner.stop()
    return jobs / elapsed


def node(pg_url: str, queue: str, jobs: int, concurrency: int) -> float:
    found = peer(
        pg_url,
        "bench-work",
        "--queue",
        queue,
        "--count",
        str(jobs),
        "--concurrency",
        str(concurrency),
    )
    return float(found["processed"]) / (float(found["elapsed_ms"]) / 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10])
    args = parser.parse_args()
    postgres, redis_server = PostgresServer(), RedisServer()
    postgres.start()
    redis_server.start()
    try:
        import django
        from django.conf import settings

        settings.configure(
            INSTALLED_APPS=["queues"],
            BULLPEN={"CONNECTIONS": {"main": redis_server.url, "pg": postgres.url}},
            USE_TZ=True,
        )
        django.setup()
        results: dict[int, dict[str, list[float]]] = {
            c: {"runner": [], "node": []} for c in args.concurrency
        }
        load = [os.getloadavg()[0]]
        for round_ in range(args.rounds):
            for concurrency in args.concurrency:
                order = ["runner", "node"] if round_ % 2 == 0 else ["node", "runner"]
                for who in order:
                    queue = f"b{round_}-{concurrency}-{who}"
                    peer(
                        postgres.url,
                        "add-bulk",
                        "--queue",
                        queue,
                        "--name",
                        "n",
                        "--count",
                        str(args.jobs),
                    )
                    if who == "runner":
                        rate = asyncio.run(runner(queue, args.jobs, concurrency))
                    else:
                        rate = node(postgres.url, queue, args.jobs, concurrency)
                    results[concurrency][who].append(rate)
                    load.append(os.getloadavg()[0])
        span = f"load {min(load):.1f} to {max(load):.1f}"
        print(f"{args.jobs} no-op jobs a run, {args.rounds} rounds interleaved; {span}\n")
        print("| concurrency | runner jobs/s (median) | Node jobs/s (median) | runner / Node |")
        print("|---:|---:|---:|---:|")
        for concurrency, found in results.items():
            ours, theirs = statistics.median(found["runner"]), statistics.median(found["node"])
            print(f"| {concurrency} | {ours:.0f} | {theirs:.0f} | {ours / theirs:.2f} |")
    finally:
        postgres.stop()
        redis_server.stop()


if __name__ == "__main__":
    main()
