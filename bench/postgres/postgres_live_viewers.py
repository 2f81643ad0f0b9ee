"""What the live reader of a Postgres store sends to PostgreSQL per viewer count: the same
passes of queues/postgres/live_rows.py with 1 and with ``--viewers`` pages watching one queue
page and one job page each, while Node adds and works jobs at the same pace. Statements are
counted at the reader's session (BullMQ's commands it sends); runs interleaved. Run it alone::

    .venv/bin/python bench/postgres/postgres_live_viewers.py --viewers 100 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers.postgres_server import PostgresServer  # noqa: E402
from tests.support.servers.redis_server import RedisServer  # noqa: E402

PEER = ROOT / "tests" / "interop" / "peer.mjs"
PASSES = 20


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


async def one_run(pg_url: str, queue: str, viewers: int) -> tuple[int, int]:
    """(statements, messages) of ``PASSES`` passes while Node works 20 jobs of ``queue``."""
    from queues.live.interest import Interest
    from queues.live.outbox import Outbox
    from queues.live.settings import LiveSettings
    from queues.postgres import sessions
    from queues.postgres.live_rows import PostgresLiveRows

    sent: list[Any] = []

    async def publish(topic: Any, message: Any) -> None:
        sent.append(message)

    first = peer(pg_url, "add", "--queue", queue, "--name", "n", "--data", "{}")["id"]
    peer(pg_url, "add-bulk", "--queue", queue, "--name", "n", "--count", "19")
    registry = Interest()
    for _ in range(viewers):  # each viewer: the queue page and the first job's page
        registry.queues[f"{queue}@pg"] += 1
        registry.jobs[(f"{queue}@pg", first)] += 1
    outbox = Outbox(publish, layer_back=lambda: None)
    reader = PostgresLiveRows(outbox, "pg", registry, LiveSettings.from_config())
    counted = 0
    original = sessions.Session.queries

    async def counting(self: Any, statements: list[tuple[str, list[Any]]]) -> Any:
        nonlocal counted
        counted += len(statements)
        return await original(self, statements)

    sessions.Session.queries = counting  # type: ignore[method-assign]
    try:
        work = asyncio.create_task(
            asyncio.to_thread(peer, pg_url, "work", "--queue", queue, "--count", "20", "--progress")
        )
        for _ in range(PASSES):
            await reader.follow()
            await outbox.send()
            await asyncio.sleep(0.1)
        await work
    finally:
        sessions.Session.queries = original  # type: ignore[method-assign]
        await sessions.close_current()
    return counted, len(sent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
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
        found: dict[int, list[tuple[int, int]]] = {1: [], args.viewers: []}
        load = [os.getloadavg()[0]]
        for round_ in range(args.rounds):
            order = [1, args.viewers] if round_ % 2 == 0 else [args.viewers, 1]
            for viewers in order:
                queue = f"v{round_}-{viewers}"
                found[viewers].append(asyncio.run(one_run(postgres.url, queue, viewers)))
                load.append(os.getloadavg()[0])
        print(f"{PASSES} passes a run, {args.rounds} rounds interleaved; ", end="")
        print(f"load {min(load):.1f} to {max(load):.1f}\n")
        print("| viewers | statements (median) | messages sent (median) |")
        print("|---:|---:|---:|")
        for viewers, runs in found.items():
            statements = statistics.median(run[0] for run in runs)
            messages = statistics.median(run[1] for run in runs)
            print(f"| {viewers} | {statements:.0f} | {messages:.0f} |")
    finally:
        postgres.stop()
        redis_server.stop()


if __name__ == "__main__":
    main()
