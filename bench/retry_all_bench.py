#!/usr/bin/env python3
"""Retry-all benchmark: Bullpen vs Bull Board, N failed jobs each, on the same Redis.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/retry_all_bench.py --quick            # 5,000 jobs per queue
    ./.venv/bin/python bench/retry_all_bench.py                    # 100,000 jobs per queue

Steps: start a throw-away ``redis-server``, put N jobs in the failed set of two
queues with Node BullMQ (``bench/node/seed_failed.mjs``), start Bull Board and
Bullpen on that Redis, then, one server at a time, trigger the server's
retry-all on its own queue and measure

* the wall-clock duration of the request (Bull Board answers once every job is moved;
  Bullpen answers 202 at once and its status URL is followed until the action has finished),
* the server process's resident memory: VmRSS before, and its peak while the
  request runs (VmRSS sampled from ``/proc/<pid>/status`` every ~20 ms, and
  VmHWM after resetting it through ``/proc/<pid>/clear_refs``),
* the Redis commands it ran (``INFO commandstats``).

Afterwards both queues must have an empty failed set and N jobs waiting.
Prints a Markdown report (also written to ``bench/out/``); every process it
starts is stopped on exit. Every request goes to 127.0.0.1.
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
from dataclasses import asdict
from pathlib import Path
from typing import Any

try:
    import redis as redis_py
except ImportError:  # pragma: no cover - the project venv has it
    sys.exit("retry_all_bench.py needs the 'redis' package: run it with ./.venv/bin/python")

# bench/ is not a package: its modules are imported by path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import (
    bullpen_version,
    cmd_output,
    cpu_model,
    node_pkg_version,
    python_pkg_version,
)
from retry_report import mb, render
from retry_request import QUEUES, SERVER_TITLES, Run, retry_all
from retry_servers import seed, start_redis, start_server
from servers import NODE_DIR, OUT_DIR, REPO_DIR, Processes, free_port, log, parse_range

SERVERS = ("bullboard", "bullpen")
QUICK_COUNT = 5_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--count", type=int, default=100_000, help="failed jobs per queue (default 100000)"
    )
    ap.add_argument(
        "--quick", action="store_true", help=f"{QUICK_COUNT:,} jobs per queue (overrides --count)"
    )
    ap.add_argument("--only", choices=("both", *SERVERS), default="both")
    ap.add_argument("--prefix", default="bull", help="BullMQ key prefix (default bull)")
    ap.add_argument("--redis-ports", default="6800-6849", help="range to pick the Redis port from")
    ap.add_argument("--http-ports", default="8800-8849", help="range to pick the HTTP ports from")
    ap.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds allowed per retry-all request"
    )
    ap.add_argument(
        "--seed-timeout", type=float, default=900.0, help="seconds allowed per queue's seeding"
    )
    ap.add_argument(
        "--startup-timeout", type=float, default=120.0, help="seconds to wait for each server"
    )
    ap.add_argument(
        "--settle", type=float, default=2.0, help="idle seconds before the RSS-before reading"
    )
    ap.add_argument(
        "--out", type=Path, help="write the report here too (default bench/out/retry-all-<time>.md)"
    )
    args = ap.parse_args(argv)
    count = QUICK_COUNT if args.quick else args.count
    if count < 1:
        ap.error("--count must be at least 1")

    for tool in ("node", "redis-server"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found on PATH")
    if not Path("/proc/self/status").exists():
        sys.exit("needs Linux /proc to read the servers' memory")

    servers = list(SERVERS) if args.only == "both" else [args.only]
    procs = Processes()
    tmp = Path(tempfile.mkdtemp(prefix="bullpen-retry-bench-"))
    OUT_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")

    def on_signal(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    try:
        return run(args, count, servers, procs, tmp, stamp)
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


def run(
    args: argparse.Namespace,
    count: int,
    servers: list[str],
    procs: Processes,
    tmp: Path,
    stamp: str,
) -> int:
    meta: dict[str, str] = {"date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")}

    if not (NODE_DIR / "node_modules" / "bullmq").exists():
        log("installing bench/node dependencies (npm ci)")
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, timeout=600
        )

    lo, hi = parse_range(args.redis_ports)
    redis_url = start_redis(procs, free_port(lo, hi), tmp)
    r = redis_py.Redis.from_url(redis_url, decode_responses=True)
    meta["redis"] = (
        f"redis {r.info('server').get('redis_version')} on {redis_url} "
        "(started by the benchmark, no persistence)"
    )

    seeds = {}
    t0 = time.monotonic()
    for s in servers:
        seeds[s] = seed(redis_url, args.prefix, QUEUES[s], count, args.seed_timeout)
        log(f"{QUEUES[s]}: {seeds[s]['counts']['failed']:,} failed ({seeds[s]['seconds']})")
    concurrency = next(iter(seeds.values()))["options"]["concurrency"]
    meta["seed"] = (
        f"{time.monotonic() - t0:.1f} s with bench/node/seed_failed.mjs "
        f"(addBulk, then a Worker at concurrency {concurrency}"
        " whose processor throws; each job keeps its stacktrace)"
    )
    meta["data"] = ", ".join(
        f"{QUEUES[s]}: {count:,} failed (for {SERVER_TITLES[s]})" for s in servers
    )

    hlo, hhi = parse_range(args.http_ports)
    ports: dict[str, int] = {}
    pids: dict[str, int] = {}
    for s in servers:
        ports[s] = free_port(hlo, hhi, exclude=set(ports.values()))
        _proc, pids[s] = start_server(
            s, procs, ports[s], redis_url, args.prefix, tmp, args.startup_timeout
        )

    meta["cpu"] = f"{cpu_model()} ({os.cpu_count()} CPUs), {platform.system()} {platform.release()}"
    meta["versions"] = ", ".join(
        [
            f"node {cmd_output(['node', '--version']).lstrip('v')}",
            f"bullmq {node_pkg_version('bullmq')}",
            f"@bull-board/api {node_pkg_version('@bull-board/api')}",
            f"@bull-board/express {node_pkg_version('@bull-board/express')}",
            f"express {node_pkg_version('express')}",
            f"Bullpen {bullpen_version()}",
            f"Python {platform.python_version()}",
            f"daphne {python_pkg_version('daphne')}",
            f"django {python_pkg_version('django')}",
            f"redis-py {python_pkg_version('redis')}",
        ]
    )
    meta["memory"] = (
        "RSS of the server process (Bull Board: node; Bullpen: daphne); before = VmRSS after "
        f"3 warm-up GETs and {args.settle:g} s idle; peak = max(VmRSS sampled every 20 ms, "
        "VmHWM reset just before the request); after = VmRSS "
        f"{args.settle:g} s after the answer; MB = 2^20 bytes"
    )

    runs: list[Run] = []
    for s in servers:
        log(f"{SERVER_TITLES[s]}: retry-all of {count:,} failed jobs in {QUEUES[s]}")
        result = retry_all(
            s,
            ports[s],
            pids[s],
            QUEUES[s],
            count,
            r,
            args.prefix,
            args.timeout,
            args.settle,
        )
        runs.append(result)
        log(
            f"  {result.duration_s:.2f} s, RSS {mb(result.rss_before_kb)} → peak "
            f"{mb(result.peak_kb)} MB ({result.samples} samples)"
            + (f"; problems: {'; '.join(result.problems)}" if result.problems else "")
        )

    report = render(runs, meta, count)
    print(report)
    out = args.out or (OUT_DIR / f"retry-all-{stamp}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report)
    raw: dict[str, Any] = {
        "meta": meta,
        "count": count,
        "seed": seeds,
        "runs": [{**asdict(run), "peak_kb": run.peak_kb} for run in runs],
    }
    out.with_suffix(".json").write_text(json.dumps(raw, indent=2) + "\n")
    log(f"report written to {out.relative_to(REPO_DIR) if out.is_relative_to(REPO_DIR) else out}")
    return 0 if all(not run.problems for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
