"""The many-queues benchmark's processes: its Redis, each server on the seeded queues, a timed
GET, and a server's memory (every process of its group)."""

from __future__ import annotations

import argparse
import http.client
import os
import sys
import time
from pathlib import Path

from servers import (  # bench/ is on sys.path
    NODE_DIR,
    REPO_DIR,
    Popen,
    Processes,
    free_port,
    start_redis_server,
)


def log(msg: str) -> None:
    print(f"[manyqueues {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def start_redis(procs: Processes, tmp: Path, ports: tuple[int, int]) -> str:
    port = free_port(*ports)
    log(f"starting redis-server on port {port}")
    start_redis_server(procs, port, tmp, tmp / "redis.log")
    return f"redis://127.0.0.1:{port}/0"


def start_server(
    procs: Processes,
    server: str,
    args: argparse.Namespace,
    redis_url: str,
    names_file: Path,
    port: int,
    log_path: Path,
) -> Popen:
    if server == "bullboard":
        argv = ["node", str(NODE_DIR / "bullboard.mjs"), "--redis", redis_url]
        argv += ["--prefix", args.prefix, "--port", str(port)]
        argv += ["--names-file", str(names_file), "--shared-connection"]
        return procs.start("bull board", argv, cwd=NODE_DIR, log_path=log_path)
    env = dict(os.environ)
    env.update(REDIS_URL=redis_url, BULLMQ_PREFIX=args.prefix, HOST="127.0.0.1", PORT=str(port))
    cmd = args.bullpen_cmd.format(port=port, redis_url=redis_url, prefix=args.prefix)
    log(f"starting Bullpen: {cmd}")
    # The command line comes from the person running the benchmark.
    return procs.start("bullpen", ["/bin/sh", "-c", cmd], cwd=REPO_DIR, env=env, log_path=log_path)


def wait_ready(
    port: int, path: str, proc: Popen, name: str, timeout: float, log_path: Path
) -> None:
    """Waits for HTTP 200 on `path`; one answer may take long with thousands of queues."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
            raise SystemExit(f"{name} exited with code {proc.returncode}:\n{tail}")
        try:
            status, _, _ = timed_get(port, path, max(1.0, deadline - time.monotonic()))
            if status == 200:
                return
            last = f"HTTP {status}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.3)
    raise SystemExit(f"{name} not ready on port {port} after {timeout:.0f}s ({last})")


def timed_get(port: int, path: str, timeout: float) -> tuple[int, int, float]:
    """Status, body bytes and milliseconds of one GET."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        t0 = time.perf_counter()
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, len(body), (time.perf_counter() - t0) * 1000
    finally:
        conn.close()


def process_group_rss(leader: int) -> int | None:
    """Summed VmRSS (bytes) of every process in the group `leader` started."""
    total = 0
    found = False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # The fields after the command name (which may hold spaces): state, ppid, pgrp.
            pgrp = int(stat.rsplit(")", 1)[1].split()[2])
            if pgrp != leader:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    found = True
        except (OSError, ValueError, IndexError):
            continue
    return total if found else None
