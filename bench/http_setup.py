"""The HTTP benchmark's set-up: its Redis (started, or the one given), the seeded data, both
servers answering, and the facts the report states about the run."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

from http_pages import BULLBOARD_URLS, BULLPEN_URLS, DEFAULT_BULLPEN_CMD, SERVER_TITLES
from machine import bullpen_version, cmd_output, cpu_model, node_pkg_version, python_pkg_version
from servers import (
    NODE_DIR,
    OUT_DIR,
    REPO_DIR,
    Processes,
    free_port,
    log,
    parse_range,
    start_bullboard,
    start_redis_server,
    wait_http,
)


def start_redis(args: argparse.Namespace, procs: Processes, tmp: Path) -> str:
    """The URL of ``--redis``, or of a throw-away redis-server started on a free port."""
    lo, hi = parse_range(args.redis_ports)
    if args.redis:
        redis_url: str = args.redis
    else:
        rport = free_port(lo, hi)
        redis_url = f"redis://127.0.0.1:{rport}/0"
        log(f"starting redis-server on port {rport}")
        start_redis_server(procs, rport, tmp, tmp / "redis.log", max_clients=10000)
    return redis_url


def seed(args: argparse.Namespace, redis_url: str, stamp: str) -> str:
    """Fill Redis through node/seed.mjs (unless ``--no-seed``); the report's seed line."""
    if not args.no_seed:
        cmd = [
            "node",
            str(NODE_DIR / "seed.mjs"),
            "--redis",
            redis_url,
            "--prefix",
            args.prefix,
            "--scale",
            repr(args.scale),
        ]
        if args.reset:
            cmd.append("--reset")
        log("seeding: " + " ".join(shlex.quote(c) for c in cmd))
        t0 = time.monotonic()
        seeded = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        seed_s = time.monotonic() - t0
        if seeded.returncode != 0:
            sys.exit(f"seeding failed (exit {seeded.returncode})")
        summary = json.loads(seeded.stdout)
        (OUT_DIR / f"seed-{stamp}.json").write_text(json.dumps(summary, indent=2) + "\n")
        return f"{seed_s:.1f} s (scale {args.scale:g}, {summary.get('mode')} mode)"
        log(f"seeded in {seed_s:.1f} s")
    else:
        return "skipped (--no-seed)"


def start_servers(
    args: argparse.Namespace, servers: list[str], procs: Processes, tmp: Path, redis_url: str
) -> dict[str, int]:
    """Start each server on a free port and wait until it answers; their ports."""
    hlo, hhi = parse_range(args.http_ports)
    ports: dict[str, int] = {}
    used: set[int] = set()
    for s in servers:
        port = free_port(hlo, hhi, exclude=used)
        used.add(port)
        ports[s] = port
        log_path = tmp / f"{s}.log"
        if s == "bullboard":
            proc = start_bullboard(procs, redis_url, args.prefix, port, log_path)
            ready = BULLBOARD_URLS["overview"]
        else:
            env = dict(os.environ)
            env.update(
                REDIS_URL=redis_url, BULLMQ_PREFIX=args.prefix, HOST="127.0.0.1", PORT=str(port)
            )
            cmd = args.bullpen_cmd.format(port=port, redis_url=redis_url, prefix=args.prefix)
            if cmd == DEFAULT_BULLPEN_CMD and not (REPO_DIR / "run").exists():
                sys.exit(
                    "./run not found: Bullpen cannot be started "
                    "(use --only bullboard or --bullpen-cmd)"
                )
            log(f"starting Bullpen: {cmd}")
            # The command line comes from the person running the benchmark.
            proc = procs.start(
                "bullpen", ["/bin/sh", "-c", cmd], cwd=REPO_DIR, env=env, log_path=log_path
            )
            ready = BULLPEN_URLS["overview"]
        log(f"waiting for {SERVER_TITLES[s]} on port {port}")
        wait_http(port, ready, proc, SERVER_TITLES[s], args.startup_timeout, log_path)
    return ports


def run_facts(args: argparse.Namespace) -> dict[str, str]:
    """The report's versions, cpu and wrk lines."""
    versions = [
        f"node {cmd_output(['node', '--version']).lstrip('v')}",
        f"bullmq {node_pkg_version('bullmq')}",
        f"ioredis {node_pkg_version('ioredis')}",
        f"@bull-board/api {node_pkg_version('@bull-board/api')}",
        f"@bull-board/express {node_pkg_version('@bull-board/express')}",
        f"express {node_pkg_version('express')}",
        f"Bullpen {bullpen_version()}",
        f"Python {platform.python_version()}",
        f"django {python_pkg_version('django')}",
        f"redis-py {python_pkg_version('redis')}",
    ]
    cpu = f"{cpu_model()} ({os.cpu_count()} CPUs), {platform.system()} {platform.release()}"
    wrk_version = cmd_output(["wrk", "-v"]).splitlines()[0].split(" [")[0]
    wrk = (
        f"{wrk_version}; "
        f"{args.duration:g} s per run after {args.warmup:g} s warm-up; "
        f"1 conn = -t1 -c1, 10 conn = -t2 -c10; Redis cmds over {args.samples} sequential requests"
    )
    return {"versions": ", ".join(versions), "cpu": cpu, "wrk": wrk}
