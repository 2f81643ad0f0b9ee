#!/usr/bin/env python3
"""The size of the first live message an overview's socket gets, over many queues.

Seeds a throw-away redis-server with ``--queues`` tenant queues (bench/node/seed_many.mjs),
then, for each ``--server NAME=COMMAND`` in turn (``--rounds`` times, interleaved), starts
that Bullpen on it, waits until the overview page is rendered from the live reader's counts
(its ``data-live`` carries a version), and opens three sockets, printing the bytes of the
first counts message each receives:

* ``page, resumed``: the watch the overview page sends (its rows, how many queues its list
  counts, the version it was rendered at);
* ``page, fresh``: the same without the version (a page rendered while the reader was behind);
* ``script``: ``{"watch": "overview"}`` alone.

Run from the repository root::

    .venv/bin/python bench/manyqueues/first_message.py --queues 10000 \\
        --server "main=cd /work/main && ./run serve" --server "branch=./run serve"
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from servers import Processes, free_port, http_get  # bench/ is not a package

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BENCH_DIR.parent
NODE_DIR = BENCH_DIR / "node"
FIRST_TYPES = ("counts", "overview")


def log(msg: str) -> None:
    print(f"[first-message {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def start_redis(procs: Processes, tmp: Path) -> str:
    port = free_port(6500, 6999)
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    procs.start("redis-server", [*argv, "--appendonly", "no", "--dir", str(tmp)])
    time.sleep(0.5)
    return f"redis://127.0.0.1:{port}/0"


def seed(redis_url: str, queues: int) -> None:
    cmd = ["node", str(NODE_DIR / "seed_many.mjs"), "--redis", redis_url, "--prefix", "bull"]
    cmd += ["--queues", str(queues), "--reset", "--procs", "2"]
    log(f"seeding {queues} queues")
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)


def overview_page(port: int) -> dict[str, Any] | None:
    """What the overview page shows and says in its watch; None until it is rendered from
    the live reader's counts (it then carries their version)."""
    status, body = http_get(port, "/queues/", timeout=300)
    if status != 200:
        return None
    text = body.decode()
    live = re.search(r'<main id="main"[^>]*data-live="([^"]*)"', text)
    spec = json.loads(html.unescape(live.group(1))) if live else {}
    total = re.search(r'id="overview-list"[^>]*data-total="(\d+)"', text)
    shown = [html.unescape(s) for s in re.findall(r'<tr data-queue="([^"]*)"', text)]
    if not spec.get("since") or total is None:
        return None
    return {**spec, "shown": shown[:500], "listed": int(total.group(1))}


async def first_message(port: int, watch: dict[str, Any]) -> int:
    """The bytes of the first counts (or overview parts) message the socket gets."""
    url = f"ws://127.0.0.1:{port}/ws/bullpen/"
    async with connect(url, origin=f"http://127.0.0.1:{port}", max_size=2**26) as socket:  # type: ignore[arg-type]
        await socket.send(json.dumps(watch))
        while True:
            raw = await asyncio.wait_for(socket.recv(decode=False), 120)
            if json.loads(raw).get("type") in FIRST_TYPES:
                return len(raw)


async def measure(name: str, command: str, redis_url: str, tmp: Path) -> dict[str, int]:
    procs = Processes()
    port = free_port(8600, 8999)
    env = dict(os.environ, REDIS_URL=redis_url, BULLMQ_PREFIX="bull", HOST="127.0.0.1")
    env["PORT"] = str(port)
    try:
        log(f"{name}: starting {command}")
        server = procs.start(
            name, ["/bin/sh", "-c", command], cwd=REPO_DIR, env=env, log_path=tmp / f"{name}.log"
        )
        deadline = time.monotonic() + 600
        page = None
        while page is None:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{name} did not render the overview from its reader")
            try:
                # A socket watching the overview starts the reader; the page then shows its
                # counts once it follows every queue.
                await first_message(port, {"watch": "overview"})
                page = overview_page(port)
            except OSError:
                await asyncio.sleep(1)
        fresh = {k: v for k, v in page.items() if k != "since"}
        return {
            "page, resumed": await first_message(port, page),
            "page, fresh": await first_message(port, fresh),
            "script": await first_message(port, {"watch": "overview"}),
        }
    finally:
        procs.stop_all()


async def run(args: argparse.Namespace) -> None:
    servers = [spec.split("=", 1) for spec in args.server]
    procs = Processes()
    with tempfile.TemporaryDirectory(prefix="first-message-") as tmp_dir:
        tmp = Path(tmp_dir)
        try:
            redis_url = start_redis(procs, tmp)
            seed(redis_url, args.queues)
            rows = []
            for round_ in range(args.rounds):
                for name, command in servers:
                    sizes = await measure(name, command, redis_url, tmp)
                    rows.append((round_ + 1, name, sizes))
                    log(f"{name}: {sizes}")
        finally:
            procs.stop_all()
    print(f"First message to an overview socket, {args.queues} queues (bytes)\n")
    print("| round | server | page, resumed | page, fresh | script |")
    print("| --- | --- | --- | --- | --- |")
    for round_, name, sizes in rows:
        cells = " | ".join(f"{sizes[k]:,}" for k in ("page, resumed", "page, fresh", "script"))
        print(f"| {round_} | {name} | {cells} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queues", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--server", action="append", required=True, help="NAME=COMMAND starting a Bullpen"
    )
    asyncio.run(run(parser.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
