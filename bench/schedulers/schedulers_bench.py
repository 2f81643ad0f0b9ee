#!/usr/bin/env python3
"""The schedulers page's read over many queues: Redis round trips and commands.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/schedulers/schedulers_bench.py              # 2,000 queues
    ./.venv/bin/python bench/schedulers/schedulers_bench.py --queues 500 --schedulers 20

Starts a throw-away ``redis-server``, fills it with small tenant queues written by Node BullMQ
(``bench/node/seed_many.mjs``), gives a few of them job schedulers through the bullmq package
(half ``every``, half a cron pattern; with no worker the ``every`` ones are overdue), then reads
every queue's schedulers as ``schedulers/`` and ``api/schedulers/`` do
(``queues.schedulers.everywhere.all_schedulers``) and prints:

* the round trips: batches sent to Redis, counted by wrapping the client's pipeline execution
  (``queues.redis.fastpipe.execute``), and the commands in them;
* the commands Redis ran, from ``INFO commandstats`` (those the script runs included);
* the wall time of the read (the median of five, after one that loads the script).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
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


def seed(url: str, queues: int) -> None:
    command = ["node", str(NODE_DIR / "seed_many.mjs"), "--redis", url, "--queues", str(queues)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"seeding failed (exit {done.returncode})")


async def add_schedulers(count: int) -> None:
    from queues.actions.scheduler_actions import upsert_scheduler
    from queues.reads.discovery import discovered

    refs = sorted((await discovered()).queues)
    step = max(1, len(refs) // count)
    for index, ref in enumerate(refs[::step][:count]):
        repeat: dict[str, Any] = {"every": 60_000} if index % 2 else {"pattern": "0 3 * * *"}
        await upsert_scheduler(ref, f"bench-{index}", repeat, "bench", {"n": index}, {})


async def measure(url: str, schedulers: int) -> dict[str, Any]:
    import redis

    from queues.reads.discovery import discovered
    from queues.redis import fastpipe
    from queues.schedulers.everywhere import all_schedulers

    await add_schedulers(schedulers)
    refs = sorted((await discovered()).queues)
    await all_schedulers(refs)  # loads the script
    batches: list[int] = []
    send = fastpipe.execute

    async def counted(client: Any, commands: Any, packed: Any = None) -> Any:
        batches.append(len(commands))
        return await send(client, commands, packed)

    fastpipe.execute = counted  # type: ignore[assignment]
    plain = redis.Redis.from_url(url)
    plain.config_resetstat()
    found = await all_schedulers(refs)
    stats = plain.info("commandstats")
    fastpipe.execute = send  # type: ignore[assignment]
    times = []
    for _ in range(5):
        started = time.perf_counter()
        await all_schedulers(refs)
        times.append((time.perf_counter() - started) * 1000)
    return {
        "queues": len(refs),
        "schedulers": len(found.rows),
        "overdue": sum(1 for row in found.rows if row["overdue"]),
        "round_trips": len(batches),
        "commands_sent": sum(batches),
        "batches": batches,
        "redis_commands": {
            name.removeprefix("cmdstat_"): value["calls"]
            for name, value in stats.items()
            if not name.startswith(("cmdstat_config", "cmdstat_info"))
        },
        "median_ms": round(statistics.median(times), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=2000)
    parser.add_argument("--schedulers", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_redis(Path(tmp))
        try:
            started = time.monotonic()
            seed(url, args.queues)
            print(f"seeded {args.queues} queues in {time.monotonic() - started:.0f} s")
            settings.configure(
                INSTALLED_APPS=["queues"],
                BULLPEN={"REDIS_URL": url, "DISCOVERY_INTERVAL": 3600},
            )
            django.setup()
            result = asyncio.run(measure(url, args.schedulers))
        finally:
            proc.terminate()
            proc.wait(10)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
