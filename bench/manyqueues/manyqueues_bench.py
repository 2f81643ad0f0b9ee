#!/usr/bin/env python3
"""Bullpen and Bull Board side by side with thousands of queues.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/manyqueues/manyqueues_bench.py --queues 1000,2000
    ./.venv/bin/python bench/manyqueues/manyqueues_bench.py --queues 10000 --only bullpen

For every number of queues: empty the bench's own ``redis-server``, seed it with that many
small tenant queues (``bench/node/seed_many.mjs``), then, one server at a time (Bull Board,
then Bullpen, on the same Redis), load the overview page in Chromium and measure first
contentful paint, network idle, requests, bytes, the Redis commands of a page view, the
Redis commands a minute of one idle viewer and the server's memory. Prints one Markdown
table with the targets, writes it to ``bench/out/manyqueues-<time>.md`` (+ ``.json``), and
stops every process it started, also on Ctrl-C. Every request goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MANY_DIR = Path(__file__).resolve().parent
BENCH_DIR = MANY_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

try:
    import redis as redis_py
    from playwright.sync_api import sync_playwright
except ImportError as exc:  # pragma: no cover - the project venv has them
    sys.exit(f"manyqueues_bench.py needs {exc.name!r}: run it with ./.venv/bin/python")


# bench/ is on sys.path only from here on.
from machine import (  # noqa: E402
    bullpen_version,
    cmd_output,
    cpu_model,
    node_pkg_version,
    python_pkg_version,
)
from measure_size import PAGES, run_size  # noqa: E402
from page_load import CHROMIUM_ARGS, CHROMIUM_PATH  # noqa: E402
from report import render, verdicts  # noqa: E402
from results import SizeResult  # noqa: E402
from server_processes import log, start_redis  # noqa: E402
from servers import NODE_DIR, OUT_DIR, REPO_DIR, Processes, parse_range  # noqa: E402

DEFAULT_BULLPEN_CMD = "./run serve"
# Bull Board first: once measured it sits idle (it only works when its page polls), while
# Bullpen keeps background work running that would blur Bull Board's quiet windows.
ORDER = ("bullboard", "bullpen")


def parse_queues(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("queue counts must be positive")
    return values


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--queues",
        type=parse_queues,
        default=[1000, 2000, 5000, 10000],
        help="numbers of queues, comma-separated (default 1000,2000,5000,10000)",
    )
    ap.add_argument("--only", choices=("both", "bullpen", "bullboard"), default="both")
    ap.add_argument("--loads", type=int, default=3, help="measured page loads (default 3)")
    ap.add_argument(
        "--idle-seconds",
        type=float,
        default=60.0,
        help="length of the idle-viewer window and of its quiet baseline; 0 skips it (default 60)",
    )
    ap.add_argument(
        "--settle",
        type=float,
        default=15.0,
        help="seconds between opening the idle viewer's page and counting (default 15)",
    )
    ap.add_argument(
        "--quiet",
        type=float,
        default=2.0,
        help="a load ends after this many seconds without a new request (default 2)",
    )
    ap.add_argument(
        "--keep",
        action="store_true",
        help="leave Redis and the servers of the last size running until Ctrl-C",
    )
    ap.add_argument("--prefix", default="bull", help="BullMQ key prefix (default bull)")
    ap.add_argument(
        "--bullpen-cmd",
        default=DEFAULT_BULLPEN_CMD,
        help="shell command starting Bullpen in the repository root, with REDIS_URL, "
        "BULLMQ_PREFIX, HOST and PORT set; {port}, {redis_url}, {prefix} are substituted",
    )
    ap.add_argument("--seed-procs", type=int, default=2, help="Node processes seeding (default 2)")
    ap.add_argument(
        "--load-timeout", type=float, default=180.0, help="seconds allowed for one page load"
    )
    ap.add_argument(
        "--startup-timeout", type=float, default=300.0, help="seconds to wait for each server"
    )
    ap.add_argument("--redis-ports", default="6850-6899", help="range for the Redis port")
    ap.add_argument("--http-ports", default="8850-8899", help="range for the servers' ports")
    ap.add_argument(
        "--out", type=Path, help="report file (default bench/out/manyqueues-<time>.md; + .json)"
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.loads < 1:
        sys.exit("--loads must be at least 1")
    for tool in ("node", "redis-server"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found on PATH")
    if not Path(CHROMIUM_PATH).exists():
        sys.exit(f"{CHROMIUM_PATH} not found: apt-get install chromium")
    servers = [s for s in ORDER if args.only in ("both", s)]
    if "bullpen" in servers and args.bullpen_cmd == DEFAULT_BULLPEN_CMD:
        if not (REPO_DIR / "run").exists():
            sys.exit("./run not found: use --only bullboard or --bullpen-cmd")

    procs = Processes()
    tmp = Path(tempfile.mkdtemp(prefix="bullpen-manyqueues-"))
    OUT_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")

    def on_signal(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    try:
        return run(args, servers, procs, tmp, stamp)
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


def run(
    args: argparse.Namespace, servers: list[str], procs: Processes, tmp: Path, stamp: str
) -> int:
    if not (NODE_DIR / "node_modules" / "bullmq").exists():
        log("installing bench/node dependencies (npm ci)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)
    load_before = os.getloadavg()
    redis_url = start_redis(procs, tmp, parse_range(args.redis_ports))
    redis_version = redis_py.Redis.from_url(redis_url).info("server").get("redis_version")
    sizes: list[SizeResult] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
        try:
            for k, queues in enumerate(args.queues):
                keep_running = args.keep and k == len(args.queues) - 1
                log(f"=== {queues:,} queues ===")
                sizes.append(
                    run_size(browser, procs, args, redis_url, servers, queues, tmp, keep_running)
                )
            chromium_version = browser.version
        finally:
            browser.close()

    meta = {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": (
            f"{cpu_model()} ({os.cpu_count()} CPUs), {platform.system()} {platform.release()}; "
            f"load average {load_before[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
        ),
        "redis": f"redis {redis_version}, started by the bench, emptied and reseeded per size",
        "versions": ", ".join(
            [
                f"Bullpen {bullpen_version()}",
                f"bullmq {node_pkg_version('bullmq')}",
                f"@bull-board/api {node_pkg_version('@bull-board/api')}",
                f"node {cmd_output(['node', '--version']).lstrip('v')}",
                f"Chromium {chromium_version}",
                f"playwright {python_pkg_version('playwright')}",
                f"Python {platform.python_version()}",
            ]
        ),
        "method": (
            f"Bullpen `GET {PAGES['bullpen']}` (`./run serve`: one Daphne process), Bull Board "
            f"`GET {PAGES['bullboard']}` (bench/node/bullboard.mjs, one shared connection); "
            f"{args.loads} loads, each until {args.quiet:g} s without a new request; "
            f"idle viewer {args.idle_seconds:g} s after {args.settle:g} s"
        ),
    }
    report = render(sizes, meta, args.loads)
    print(report)
    out = args.out or (OUT_DIR / f"manyqueues-{stamp}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report)
    raw = {
        "meta": meta,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "verdicts": verdicts(sizes),
        "sizes": [size.to_json() for size in sizes],
    }
    out.with_suffix(".json").write_text(json.dumps(raw, indent=2) + "\n")
    log(f"report written to {out}")
    if args.keep:
        log(f"--keep: Redis at {redis_url}; the servers above stay up until Ctrl-C")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            log("stopping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
