"""The queue layer's reads on BullMQ 6's Postgres store beside the same data in Redis.

Node BullMQ fills both stores alike (a queue of ``--jobs`` waiting jobs and 19 queues of five,
one of which fails them), then this script times, in one process, what the overview and a
queue page read: every queue's counts, the counts of the small queues alone, a failed tab, and
a page deep in the big queue's waiting list. Run it alone with the project's virtualenv::

    .venv/bin/python bench/postgres/postgres_reads.py --jobs 100000

It starts its own PostgreSQL 15 and redis-server and prints a Markdown table.
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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers.postgres_server import PostgresServer  # noqa: E402
from tests.support.servers.redis_server import RedisServer  # noqa: E402

PEER = ROOT / "tests" / "interop" / "peer.mjs"
SMALL_QUEUES = 19


def peer(flags: list[str], *args: str) -> Any:
    result = subprocess.run(
        ["node", str(PEER), *args, *flags], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"peer {args[0]} failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout)


def seed(flags: list[str], jobs: int) -> float:
    started = time.monotonic()
    peer(flags, "add-bulk", "--queue", "big", "--name", "job", "--count", str(jobs))
    seconds = time.monotonic() - started
    for index in range(SMALL_QUEUES):
        peer(flags, "add-bulk", "--queue", f"q{index:02d}", "--name", "job", "--count", "5")
    peer(flags, "work", "--queue", "q00", "--count", "5", "--fail")
    return seconds


async def p50_ms(read: Callable[[], Awaitable[Any]], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await read()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 1)


async def measure(connection: str, runs: int) -> dict[str, float]:
    from queues.reads import counts, listing
    from queues.reads.discovery import discovered_on
    from queues.reads.keys import QueueRef

    every = list((await discovered_on(connection)).queues)
    small = [ref for ref in every if ref.name != "big"]
    big, failing = QueueRef("bull", "big", connection), QueueRef("bull", "q00", connection)
    return {
        "counts, every queue": await p50_ms(lambda: counts.read_summaries(every), runs),
        "counts, small queues": await p50_ms(lambda: counts.read_summaries(small), runs),
        "failed tab": await p50_ms(lambda: listing.job_page(failing, "failed", 1, 50), runs),
        "waiting, page 100": await p50_ms(lambda: listing.job_page(big, "waiting", 100, 50), runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    postgres, redis = PostgresServer(), RedisServer()
    postgres.start()
    redis.start()
    try:
        seeded = {
            "pg": seed(["--postgres", postgres.url], args.jobs),
            "main": seed(["--redis", redis.url], args.jobs),
        }
        os.environ.update(
            DJANGO_SETTINGS_MODULE="tests.settings",
            BULLPEN_TEST_DISCOVERY_INTERVAL="300",
            BULLPEN_TEST_CONNECTIONS=json.dumps(
                {"main": {"URL": redis.url}, "pg": {"URL": postgres.url}}
            ),
        )
        import django

        django.setup()
        figures = {name: asyncio.run(measure(name, args.runs)) for name in ("pg", "main")}
    finally:
        postgres.stop()
        redis.stop()
    shape = f"{args.jobs:,} jobs in one queue, {SMALL_QUEUES} of five"
    print(f"| p50, ms ({shape}) | Postgres | Redis |")
    print("| --- | ---: | ---: |")
    print(f"| Node `addBulk` of the big queue (s) | {seeded['pg']:.1f} | {seeded['main']:.1f} |")
    for what in figures["pg"]:
        print(f"| {what} | {figures['pg'][what]} | {figures['main'][what]} |")


if __name__ == "__main__":
    main()
