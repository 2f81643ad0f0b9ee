"""What a deployment of PostgreSQL stores alone (no Redis) costs the store and the servers as
viewers grow: two daphne processes, each reading the store for its own pages, with 0, 1, 10 and
``--viewers`` websockets (half on the overview, half on a queue page, spread over both
processes), while Node adds jobs at a steady pace. Measured over each window: the store's
committed transactions (``pg_stat_database``: Bullpen's reads, in autocommit one a statement,
plus Node's adds, the same in every run), the daphne processes' CPU seconds, and the messages
each viewer got. Runs interleaved. Run it alone::

    .venv/bin/python bench/postgres/postgres_only_viewers.py --viewers 100 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.peer import PostgresPeer  # noqa: E402
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen  # noqa: E402
from tests.support.servers.postgres_server import PostgresServer  # noqa: E402

WINDOW_S = 10.0
QUEUES = 20
ADDS_PER_SECOND = 5


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def commits(postgres: PostgresServer) -> int:
    return int(postgres.psql("SELECT xact_commit FROM pg_stat_database WHERE datname = 'bullmq'"))


async def viewer(port: int, watch: dict[str, str], got: list[int], index: int) -> None:
    from websockets.asyncio.client import connect

    async with connect(
        f"ws://127.0.0.1:{port}/ws/bullpen/",
        origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
        proxy=None,
        ping_interval=None,
        max_size=2**24,
    ) as socket:
        await socket.recv()  # the status
        await socket.send(json.dumps(watch))
        async for _ in socket:
            got[index] += 1


async def one_window(
    servers: list[LiveServer], postgres: PostgresServer, peer: PostgresPeer, viewers: int
) -> dict[str, float]:
    ports = [int(server.url.rsplit(":", 1)[1]) for server in servers]
    got = [0] * viewers
    watches = [{"watch": "overview"}, {"watch": "queue", "queue": "q0"}]
    tasks = [
        asyncio.create_task(viewer(ports[n % len(ports)], watches[n % 2], got, n))
        for n in range(viewers)
    ]
    await asyncio.sleep(3.0)  # every socket open and watching
    before = list(got)
    pids = [server.process.pid for server in servers]
    cpu, committed, started = [cpu_seconds(pid) for pid in pids], commits(postgres), time.time()
    adds = 0
    while time.time() - started < WINDOW_S:
        queue = f"q{adds % QUEUES}"
        await asyncio.to_thread(peer, "add", "--queue", queue, "--name", "n", "--data", "{}")
        adds += 1
        await asyncio.sleep(max(0.0, started + adds / ADDS_PER_SECOND - time.time()))
    elapsed = time.time() - started
    spent = sum(cpu_seconds(pid) - c for pid, c in zip(pids, cpu, strict=True))
    transactions = commits(postgres) - committed
    messages = [g - b for g, b in zip(got, before, strict=True)]
    failed = [task for task in tasks if task.done()]
    if failed:
        raise SystemExit(f"{len(failed)} of {viewers} viewers closed: {failed[0].exception()!r}")
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "tx_per_s": transactions / elapsed,
        "cpu_s": spent,
        "adds": adds,
        "msgs_per_viewer": statistics.median(messages) if messages else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    postgres = PostgresServer()
    postgres.start()
    peer = PostgresPeer(postgres.url)
    folder = Path(tempfile.mkdtemp(prefix="bullpen-pg-only-"))
    connections = json.dumps({"pg": {"URL": postgres.url}})
    extra = {
        "BULLPEN_TEST_CONNECTIONS": connections,
        "BULLPEN_TEST_TASKS": "0",
        "BULLPEN_TEST_DISCOVERY_INTERVAL": "30",
        # Every viewer comes from one address: past the default 20 sockets it would be refused.
        "BULLPEN_TEST_LIVE": json.dumps({"max_sockets_per_client": 1000}),
    }
    servers: list[LiveServer] = []
    try:
        for n in range(QUEUES):
            peer("add", "--queue", f"q{n}", "--name", "n", "--data", "{}")
        for n in range(2):
            servers.append(
                start_bullpen("redis://127.0.0.1:1/0", folder / f"daphne-{n}.log", extra)
            )
        counts = [0, 1, 10, args.viewers]
        found: dict[int, list[dict[str, float]]] = {n: [] for n in counts}
        load = [os.getloadavg()[0]]
        for round_ in range(args.rounds):
            for viewers in counts if round_ % 2 == 0 else list(reversed(counts)):
                found[viewers].append(asyncio.run(one_window(servers, postgres, peer, viewers)))
                load.append(os.getloadavg()[0])
        print(f"two daphne processes, {QUEUES} queues, Node adding {ADDS_PER_SECOND} jobs/s, ")
        print(f"{WINDOW_S:.0f} s windows, {args.rounds} rounds interleaved; ", end="")
        print(f"load {min(load):.1f} to {max(load):.1f}\n")
        print("| viewers | store transactions/s (median) | daphne CPU s (median, both) |", end="")
        print(" messages per viewer (median) |")
        print("|---:|---:|---:|---:|")
        for viewers, runs in found.items():
            tx = statistics.median(run["tx_per_s"] for run in runs)
            cpu = statistics.median(run["cpu_s"] for run in runs)
            msgs = statistics.median(run["msgs_per_viewer"] for run in runs)
            print(f"| {viewers} | {tx:.1f} | {cpu:.2f} | {msgs:.0f} |")
    finally:
        for server in servers:
            stop_bullpen(server)
        postgres.stop()


if __name__ == "__main__":
    main()
