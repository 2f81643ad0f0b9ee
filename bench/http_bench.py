#!/usr/bin/env python3
"""Side-by-side HTTP benchmark: Bullpen vs Bull Board on the same Redis.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/http_bench.py --scale 0.05    # quick run
    ./.venv/bin/python bench/http_bench.py                 # full scale (1.0)

Steps: start a throw-away ``redis-server`` on a free port (unless ``--redis``
is given), seed it with Node BullMQ (``bench/node/seed.mjs``; skip with
``--no-seed``), start Bull Board (``bench/node/bullboard.mjs``) and Bullpen
(``./run serve``) on free ports, then for every page (overview, failed jobs
page 1, a deep failed page) and every server measure with ``wrk``:

* p50 / p99 latency and req/s with 1 connection (1 thread),
* p50 / p99 latency and req/s with 10 connections (2 threads),
* Redis commands per request: the growth of the sum of ``calls`` in
  ``INFO commandstats`` over 100 sequential requests, divided by 100 (our own
  ``INFO`` call is subtracted, and so is whatever Redis ran while idle for the
  same time).

Prints a Markdown report (also written to ``bench/out/``) with the
Bullpen / Bull Board ratios and whether each target is met. Every process it
starts is stopped on exit. Every request goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import redis as redis_py
except ImportError:  # pragma: no cover - the project venv has it
    sys.exit("http_bench.py needs the 'redis' package: run it with ./.venv/bin/python")

from http_pages import (
    BIG_QUEUE,
    BULLBOARD_URLS,
    BULLPEN_URLS,
    DEFAULT_BULLPEN_CMD,
    PER_PAGE,
    SERVER_TITLES,
    Cell,
    Page,
    check_response,
)
from http_report import render
from http_setup import run_facts, seed, start_redis, start_servers
from redis_commands import measure_commands
from servers import NODE_DIR, OUT_DIR, REPO_DIR, Processes, http_get, log
from wrk import run_wrk

CMD_SAMPLES = 100


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="data size; 1.0 = 1M waiting, 500k completed, 100k failed, 100k delayed",
    )
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per wrk run (default 10)")
    ap.add_argument(
        "--warmup",
        type=float,
        default=3.0,
        help="seconds of wrk warm-up per page and server (default 3)",
    )
    ap.add_argument(
        "--redis", help="use this Redis (redis://127.0.0.1:PORT/DB) instead of starting one"
    )
    ap.add_argument("--prefix", default="bull", help="BullMQ key prefix (default bull)")
    ap.add_argument(
        "--no-seed", action="store_true", help="do not seed; the bench-* queues must already exist"
    )
    ap.add_argument(
        "--reset", action="store_true", help="let the seeder wipe existing bench-* queues first"
    )
    ap.add_argument("--only", choices=("both", "bullboard", "bullpen"), default="both")
    ap.add_argument(
        "--bullpen-cmd",
        default=DEFAULT_BULLPEN_CMD,
        help="shell command starting Bullpen, run in the repository root with REDIS_URL, "
        "BULLMQ_PREFIX, HOST "
        "and PORT set; {port}, {redis_url} and {prefix} are substituted (default: ./run serve)",
    )
    ap.add_argument(
        "--deep-page",
        type=int,
        help="page number of the deep failed page (default: the middle page)",
    )
    ap.add_argument(
        "--samples",
        type=int,
        default=CMD_SAMPLES,
        help="sequential requests for the Redis command count",
    )
    ap.add_argument("--redis-ports", default="6500-6599", help="range to pick the Redis port from")
    ap.add_argument("--http-ports", default="8500-8599", help="range to pick the HTTP ports from")
    ap.add_argument(
        "--startup-timeout", type=float, default=120.0, help="seconds to wait for each server"
    )
    ap.add_argument(
        "--fail-on-miss", action="store_true", help="exit with status 1 when a target is not met"
    )
    ap.add_argument(
        "--out",
        type=Path,
        help="write the Markdown report here too (default bench/out/http-<time>.md)",
    )
    args = ap.parse_args(argv)

    for tool in ("wrk", "node") + (() if args.redis else ("redis-server",)):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found on PATH")

    servers = ["bullboard", "bullpen"] if args.only == "both" else [args.only]
    procs = Processes()
    tmp = Path(tempfile.mkdtemp(prefix="bullpen-bench-"))
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
    meta: dict[str, str] = {"date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")}

    # Node dependencies, installed from the lock file when missing.
    if not (NODE_DIR / "node_modules" / "bullmq").exists():
        log("installing bench/node dependencies (npm ci)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)

    redis_url = start_redis(args, procs, tmp)
    r = redis_py.Redis.from_url(redis_url, decode_responses=True)
    rinfo = r.info("server")
    meta["redis"] = (
        f"{redis_url} (redis {rinfo.get('redis_version')}"
        f"{', started by the benchmark' if not args.redis else ''})"
    )
    meta["seed"] = seed(args, redis_url, stamp)

    big = {
        k: int(r.zcard(f"{args.prefix}:{BIG_QUEUE}:{k}"))
        for k in ("completed", "failed", "delayed")
    }
    big["waiting"] = int(r.llen(f"{args.prefix}:{BIG_QUEUE}:wait"))
    n_queues = sum(1 for _ in r.scan_iter(match=f"{args.prefix}:bench-*:meta", count=1000))
    meta["data"] = (
        f"{n_queues} queues; {BIG_QUEUE}: {big['waiting']:,} waiting, "
        f"{big['completed']:,} completed, "
        f"{big['failed']:,} failed, {big['delayed']:,} delayed"
    )
    if big["failed"] == 0:
        sys.exit(f"{BIG_QUEUE} has no failed jobs: seed first (drop --no-seed)")
    pages_total = math.ceil(big["failed"] / PER_PAGE)
    deep = args.deep_page or max(1, math.ceil(pages_total / 2))

    ports = start_servers(args, servers, procs, tmp, redis_url)
    meta.update(run_facts(args))

    fmt = dict(queue=BIG_QUEUE, per_page=PER_PAGE)
    pages = [
        Page(
            "overview",
            "overview (20 queues)",
            {
                "bullboard": BULLBOARD_URLS["overview"],
                "bullpen": BULLPEN_URLS["overview"],
            },
        ),
        Page(
            "failed1",
            f"failed p1 ({PER_PAGE} of {big['failed']:,})",
            {
                "bullboard": BULLBOARD_URLS["failed"].format(page=1, **fmt),
                "bullpen": BULLPEN_URLS["failed"].format(page=1, **fmt),
            },
        ),
        Page(
            "faileddeep",
            f"failed p{deep} ({PER_PAGE} of {big['failed']:,})",
            {
                "bullboard": BULLBOARD_URLS["failed"].format(page=deep, **fmt),
                "bullpen": BULLPEN_URLS["failed"].format(page=deep, **fmt),
            },
        ),
    ]

    for page in pages:
        for s in servers:
            port = ports[s]
            path = page.urls[s]
            url = f"http://127.0.0.1:{port}{path}"
            cell = Cell()
            page.cells[s] = cell
            status, body = http_get(port, path)
            if status != 200:
                cell.note = f"HTTP {status} on the first request"
                log(f"{SERVER_TITLES[s]} {path}: HTTP {status}; skipping")
                continue
            cell.note = check_response(s, page.key, body)
            if cell.note:
                log(f"warning: {SERVER_TITLES[s]} {path}: {cell.note}")
            log(f"{page.title} / {SERVER_TITLES[s]}: warm-up {args.warmup:g} s")
            if args.warmup > 0:
                run_wrk(url, 10, 2, args.warmup)
            log(f"{page.title} / {SERVER_TITLES[s]}: 1 connection, {args.duration:g} s")
            cell.c1 = run_wrk(url, 1, 1, args.duration)
            log(f"{page.title} / {SERVER_TITLES[s]}: 10 connections, {args.duration:g} s")
            cell.c10 = run_wrk(url, 10, 2, args.duration)
            log(f"{page.title} / {SERVER_TITLES[s]}: Redis commands over {args.samples} requests")
            cell.cmds = measure_commands(r, port, path, args.samples)
            log(
                f"  p50 {cell.c1.p50_ms:.2f} ms, {cell.c1.rps:.0f} req/s (1 conn); "
                f"{cell.c10.rps:.0f} req/s (10 conn); {cell.cmds.per_request:.1f} cmds/req"
            )

    report, verdicts = render(pages, servers, meta)
    print(report)
    out = args.out or (OUT_DIR / f"http-{stamp}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report)
    raw = {
        "meta": meta,
        "scale": args.scale,
        "verdicts": verdicts,
        "pages": {
            p.key: {
                "title": p.title,
                "urls": p.urls,
                "results": {
                    s: {
                        "c1": c.c1.__dict__ if c.c1 else None,
                        "c10": c.c10.__dict__ if c.c10 else None,
                        "cmds": c.cmds.__dict__ if c.cmds else None,
                        "note": c.note,
                    }
                    for s, c in p.cells.items()
                },
            }
            for p in pages
        },
    }
    out.with_suffix(".json").write_text(json.dumps(raw, indent=2) + "\n")
    log(f"report written to {out.relative_to(REPO_DIR) if out.is_relative_to(REPO_DIR) else out}")
    if args.fail_on_miss and not all(v["met"] for v in verdicts):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
