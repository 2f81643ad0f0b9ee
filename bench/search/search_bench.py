#!/usr/bin/env python3
"""The search over every queue on a big Redis: how long Redis is held at a time.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/search/search_bench.py                   # 1,000 queues x 100 jobs
    ./.venv/bin/python bench/search/search_bench.py --jobs 1000       # 1,000 queues x 1,000 jobs

Starts a throw-away ``redis-server``, fills it with Node BullMQ (``bench/node/seed_search.mjs``),
then runs Bullpen's cross-queue search (``queues.search.all_queues.search_queues``, as
``api/search/``
runs it) over every job for a customer id (text), for a JSON field, both at once (two
searches side by side, as the per-client limit allows), and a query of three clauses
(``THREE_CLAUSES``). For each it prints:

* the wall time and jobs read per second;
* the longest step: the slowest read of one step (a range read and a read of its jobs'
  hashes, round trips and decoding included, as the search's pacing measures it), and the
  most time between two things the search hands on (that, plus matching, plus waiting for
  the other search); both are upper bounds on one step's hold on Redis;
* the jobs per step the pacing settled on;
* what another client saw meanwhile: the slowest PING answered, from a separate process on a
  connection of its own, one every half millisecond (Redis answers nobody else while it serves
  a step);
* the slowest single command Redis logged (SLOWLOG, of its newest 100,000 commands), and the
  median time of the jobs' hash reads (one ``EVALSHA`` a step) among them.

On a shared machine the PING and the longest figures catch the moments Redis or this process
waited for a CPU; the command times are Redis's own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import django
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the repository's packages
from bench.support import start_redis  # noqa: E402

NODE_DIR = ROOT / "bench" / "node"
# A query of the language with three terms: a name, a JSON equality and a comparison.
THREE_CLAUSES = "name:order AND data.customer = acme-42 AND NOT data.order < 10"


def seed(url: str, queues: int, jobs: int) -> dict[str, Any]:
    if not (NODE_DIR / "node_modules" / "bullmq").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)
    out = subprocess.run(
        ["node", "seed_search.mjs", "--redis", url, "--queues", str(queues), "--jobs", str(jobs)],
        cwd=NODE_DIR,
        check=True,
        capture_output=True,
        text=True,
    )
    summary: dict[str, Any] = json.loads(out.stdout)
    return summary


def probe(url: str, stop: Any, result: Any) -> None:
    """PING on a connection of its own every half millisecond until told to stop; the slowest
    answer, in ms. (A PING loop with no pause would take a CPU from the search it measures.)"""
    import redis

    client = redis.Redis.from_url(url)
    slowest, count = 0.0, 0
    while not stop.is_set():
        began = time.perf_counter()
        client.ping()
        slowest = max(slowest, time.perf_counter() - began)
        count += 1
        time.sleep(0.0005)
    result.put((slowest * 1000, count))


async def one_search(query: str, budget: int) -> dict[str, Any]:
    from queues.reads.discovery import discovered
    from queues.reads.keys import STATES
    from queues.search.all_queues import Match, Progress, search_queues
    from queues.search.step_pace import Pace

    refs = sorted((await discovered()).queues)
    began = last = time.perf_counter()
    longest, steps, matches = 0.0, 0, 0
    summary: Progress | None = None
    pace = Pace()
    async for item in search_queues(refs, list(STATES), query, budget=budget, pace=pace):
        now = time.perf_counter()
        longest, last, steps = max(longest, now - last), now, steps + 1
        if isinstance(item, Match):
            matches += 1
        elif isinstance(item, Progress) and item.done:
            summary = item
    assert summary is not None
    seconds = time.perf_counter() - began
    return {
        "query": query,
        "queues": summary.queues_done,
        "scanned": summary.scanned,
        "matched": matches,
        "seconds": seconds,
        "per_s": summary.scanned / seconds,
        "longest_ms": longest * 1000,
        "step_ms": pace.longest_s * 1000,
        "size": pace.size,
        "steps": steps,
    }


def measured(
    url: str, queries: list[str], budget: int
) -> tuple[list[dict[str, Any]], float, float]:
    import redis

    admin = redis.Redis.from_url(url)
    admin.config_set("slowlog-log-slower-than", 0)  # every command: the newest ones are kept
    admin.config_set("slowlog-max-len", 100_000)
    admin.slowlog_reset()
    stop, result = multiprocessing.Event(), multiprocessing.Queue()
    pinger = multiprocessing.Process(target=probe, args=(url, stop, result))
    pinger.start()
    time.sleep(0.2)

    async def both() -> list[dict[str, Any]]:
        from queues.redis.clients import close_current

        try:
            return list(await asyncio.gather(*(one_search(q, budget) for q in queries)))
        finally:
            await close_current()

    runs = asyncio.run(both())
    stop.set()
    slowest_ping, _ = result.get(timeout=10)
    pinger.join()
    logged = admin.slowlog_get(100_000)
    slowest_command = max((entry["duration"] for entry in logged), default=0) / 1000
    reads = sorted(e["duration"] for e in logged if e["command"].startswith(b"EVALSHA"))
    median_read = reads[len(reads) // 2] / 1000 if reads else 0.0
    return runs, slowest_ping, slowest_command, median_read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queues", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=100, help="jobs per queue")
    parser.add_argument(
        "--only",
        choices=("text", "field", "both", "three"),
        help="one of the searches alone",
    )
    args = parser.parse_args()
    budget = args.queues * args.jobs
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_redis(Path(tmp), "--slowlog-log-slower-than", "500")
        try:
            seeded = seed(url, args.queues, args.jobs)
            print(
                f"Seeded {seeded['queues']:,} queues, {seeded['jobs']:,} jobs "
                f"({seeded['acme']} for acme-42) in {seeded['seconds']:.0f} s"
            )
            settings.configure(
                INSTALLED_APPS=["queues"],
                BULLPEN={"REDIS_URL": url, "DISCOVERY_INTERVAL": 3600},
            )
            django.setup()
            rows = []
            searches = {
                "text": ("text", ["acme-42"]),
                "field": ("JSON field", ["data.customer = acme-42"]),
                "both": ("two at once", ["acme-42", "data.customer = acme-42"]),
                "three": ("three clauses", [THREE_CLAUSES]),
            }
            for key, (label, queries) in searches.items():
                if args.only and key != args.only:
                    continue
                runs, ping_ms, command_ms, read_ms = measured(url, queries, budget)
                rows += [(label, run, ping_ms, command_ms, read_ms) for run in runs]
        finally:
            proc.terminate()
            proc.wait(10)
    print(
        f"\n{args.queues:,} queues x {args.jobs:,} jobs, every state, budget {budget:,}; "
        f"{os.cpu_count()} CPUs\n"
    )
    print(
        "| search | query | jobs read | matches | seconds | jobs/s | jobs per step "
        "| longest step read ms | longest gap ms | slowest PING ms | slowest command ms "
        "| median job read ms |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, run, ping_ms, command_ms, read_ms in rows:
        print(
            f"| {label} | `{run['query']}` | {run['scanned']:,} | {run['matched']} | "
            f"{run['seconds']:.1f} | {run['per_s']:,.0f} | {run['size']} | "
            f"{run['step_ms']:.1f} | {run['longest_ms']:.1f} | {ping_ms:.1f} | {command_ms:.2f} "
            f"| {read_ms:.2f} |"
        )


if __name__ == "__main__":
    main()
