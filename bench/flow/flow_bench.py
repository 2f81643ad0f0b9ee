#!/usr/bin/env python3
"""A 10,000-job flow on one job page: Redis commands for one view, and for one idle minute
with the page open, Bullpen beside Bull Board's flow view on the same data.

    ./.venv/bin/python bench/flow/flow_bench.py [--children 100] [--grandchildren 99]

The flow is made by Node BullMQ's FlowProducer (tests/interop/peer.mjs ``flow``): a root in
``flow``, ``--children`` jobs in ``flow-mid``, each with ``--grandchildren`` in ``flow-leaf``
(100 children of 99 each: 10,001 jobs). Redis commands are counted by ``INFO commandstats``
(commands run inside Lua scripts included), less what Redis ran meanwhile unasked.

One view: Bullpen's job page of the root plus the tree it loads (``q/flow/jobs/<root>/flow/``),
Bull Board's job endpoint plus its flow endpoint (``api/queues/flow/<root>/flow``, its UI's
default window). Then the page opened in Chromium (Bullpen's job page, Bull Board's job page
in its own UI): the commands of its first 10 s (the page, its tree, its websocket or first
polls), and of one idle minute after, nothing changing in Redis. Figures are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FLOW_DIR = Path(__file__).resolve().parent
BENCH_DIR = FLOW_DIR.parent
REPO_DIR = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import redis as redis_py  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402
from redis_commands import calls_diff, command_calls  # noqa: E402 - bench/ is on sys.path
from servers import Processes, free_port, http_get, log, wait_http  # noqa: E402

PEER = REPO_DIR / "tests" / "interop" / "peer.mjs"
NODE_DIR = BENCH_DIR / "node"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
QUEUES = ("flow", "flow-mid", "flow-leaf")


def quiet_rate(r: redis_py.Redis, seconds: float) -> float:
    """Commands a second Redis runs with nobody asking (servers' background work)."""
    before = command_calls(r)
    time.sleep(seconds)
    return float(sum(calls_diff(before, command_calls(r)).values())) / seconds


def one_view(r: redis_py.Redis, port: int, paths: list[str]) -> tuple[float, dict[str, int], int]:
    """Commands for one view (the mean of three), its breakdown, and the bytes it sent."""
    for path in paths:  # warm: discovery and script loads are not a view's cost
        http_get(port, path)
    rate = quiet_rate(r, 3.0)
    views, size, total = 3, 0, 0.0
    breakdown: dict[str, int] = {}
    for _ in range(views):
        before = command_calls(r)
        started = time.monotonic()
        for path in paths:
            status, body = http_get(port, path)
            if status != 200:
                raise SystemExit(f"GET {path}: HTTP {status}")
            size += len(body)
        elapsed = time.monotonic() - started
        diff = calls_diff(before, command_calls(r))
        total += sum(diff.values()) - rate * elapsed
        for name, count in diff.items():
            breakdown[name] = breakdown.get(name, 0) + count
    top = dict(sorted(((k, v // views) for k, v in breakdown.items()), key=lambda kv: -kv[1]))
    return total / views, top, size // views


async def idle_minute(r: redis_py.Redis, url: str, ready: str, seconds: float) -> dict[str, Any]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await browser.new_page()
        opening = command_calls(r)
        await page.goto(url)
        await page.wait_for_selector(ready, timeout=60_000)
        await asyncio.sleep(10)  # settled: sockets open, watches taken, first polls done
        before = command_calls(r)
        opened = sum(calls_diff(opening, before).values())
        await asyncio.sleep(seconds)
        diff = calls_diff(before, command_calls(r))
        await browser.close()
    return {
        "opened": opened,
        "total": sum(diff.values()) * 60 / seconds,
        "top": dict(sorted(diff.items(), key=lambda kv: -kv[1])[:8]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=100)
    parser.add_argument("--grandchildren", type=int, default=99)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    args = parser.parse_args()

    procs = Processes()
    work = Path(tempfile.mkdtemp(prefix="bullpen-flow-bench-"))
    try:
        redis_port = free_port(6500, 6599)
        procs.start(
            "redis",
            ["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"],
            log_path=work / "redis.log",
        )
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        r = redis_py.Redis(port=redis_port, decode_responses=True)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis_py.ConnectionError:
                time.sleep(0.1)
        log(f"seeding a flow of {1 + args.children * (1 + args.grandchildren)} jobs")
        seeded = subprocess.run(
            [
                "node",
                str(PEER),
                "flow",
                "--redis",
                redis_url,
                "--queue",
                "flow",
                "--children",
                str(args.children),
                "--grandchildren",
                str(args.grandchildren),
                "--deadline-ms",
                "600000",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        root = json.loads(seeded.stdout)["root"]

        bullpen_port = free_port(8500, 8599)
        env = {**os.environ, "REDIS_URL": redis_url, "HOST": "127.0.0.1", "PORT": str(bullpen_port)}
        bullpen = procs.start(
            "bullpen", ["./run", "serve"], cwd=REPO_DIR, env=env, log_path=work / "bullpen.log"
        )
        board_port = free_port(8500, 8599, exclude=[bullpen_port])
        board = procs.start(
            "bullboard",
            [
                "node",
                str(NODE_DIR / "bullboard_flow.mjs"),
                "--redis",
                redis_url,
                "--port",
                str(board_port),
                "--names",
                ",".join(QUEUES),
            ],
            cwd=NODE_DIR,
            log_path=work / "bullboard.log",
        )
        wait_http(
            bullpen_port, "/queues/api/queues/", bullpen, "Bullpen", 120, work / "bullpen.log"
        )
        wait_http(board_port, "/api/queues", board, "Bull Board", 60, work / "bullboard.log")

        figures: dict[str, Any] = {}
        bullpen_paths = [f"/queues/q/flow/jobs/{root}/", f"/queues/q/flow/jobs/{root}/flow/"]
        board_paths = [f"/api/queues/flow/{root}", f"/api/queues/flow/{root}/flow"]
        for name, port, paths in [
            ("Bullpen", bullpen_port, bullpen_paths),
            ("Bull Board", board_port, board_paths),
        ]:
            per_view, top, size = one_view(r, port, paths)
            figures[name] = {"view": per_view, "view_top": top, "bytes": size}
            log(f"{name}: {per_view:.0f} commands for one view")
        for name, url, ready in [
            (
                "Bullpen",
                f"http://127.0.0.1:{bullpen_port}/queues/q/flow/jobs/{root}/",
                '[data-testid="flow-tree"]',
            ),
            ("Bull Board", f"http://127.0.0.1:{board_port}/queue/flow/{root}", "main"),
        ]:
            log(f"{name}: the job page open for {args.idle_seconds:.0f} s")
            figures[name]["idle"] = asyncio.run(idle_minute(r, url, ready, args.idle_seconds))

        print(f"\n## A {1 + args.children * (1 + args.grandchildren)}-job flow on one job page\n")
        print(
            "| | Redis commands, one view (HTTP) | bytes sent | opened in Chromium, first 10 s "
            "| one idle minute, page open |"
        )
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, got in figures.items():
            idle = got["idle"]
            print(
                f"| {name} | {got['view']:.0f} | {got['bytes']:,} | {idle['opened']} "
                f"| {idle['total']:.0f} |"
            )
        for name, got in figures.items():
            print(f"\n{name}, one view: {json.dumps(dict(list(got['view_top'].items())[:10]))}")
            print(f"{name}, idle minute: {json.dumps(got['idle']['top'])}")
        return 0
    finally:
        procs.stop_all()


if __name__ == "__main__":
    raise SystemExit(main())
