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
import base64
import datetime as _dt
import http.client
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

try:
    import redis as redis_py
except ImportError:  # pragma: no cover - the project venv has it
    sys.exit("retry_all_bench.py needs the 'redis' package: run it with ./.venv/bin/python")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import (  # bench/ is not a package: imported by path
    bullpen_version,
    cmd_output,
    cpu_model,
    node_pkg_version,
    python_pkg_version,
)
from redis_commands import calls_diff, command_calls
from servers import (
    NODE_DIR,
    OUT_DIR,
    REPO_DIR,
    Popen,
    Processes,
    free_port,
    http_get,
    log,
    parse_range,
    wait_http,
)

SERVERS = ("bullboard", "bullpen")
SERVER_TITLES = {"bullboard": "Bull Board", "bullpen": "Bullpen"}
# One queue per server, so each retry-all starts from the same N failed jobs.
QUEUES = {"bullboard": "bench-18", "bullpen": "bench-19"}
QUICK_COUNT = 5_000
TIMES = "\N{MULTIPLICATION SIGN}"
MINUS = "\N{MINUS SIGN}"

USERNAME = "bench"
PASSWORD = "bench-pass"  # noqa: S105  (the throw-away login of the bench server)

READY_PATHS = {"bullboard": "/api/queues", "bullpen": "/queues/api/queues/"}
RETRY_REQUESTS = {
    "bullboard": ("PUT", "/api/queues/{queue}/retry/failed"),
    "bullpen": ("POST", "/queues/api/queues/{queue}/retry/?state=failed"),
}

# bench/node/bullboard.mjs mounts its queues read-only, and Bull Board refuses
# every action on a read-only queue (405), so the retry-all run gets its own
# small server: the same packages and mounting, actions allowed (Bull Board's
# defaults: readOnlyMode false, allowRetries true). Run with `node
# --input-type=module -e` in bench/node, so the imports resolve there.
BULLBOARD_RW_SCRIPT = r"""
import express from 'express';
import { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';

const cfg = JSON.parse(process.env.BULLPEN_BENCH_BOARD);
const connection = { url: cfg.redis, maxRetriesPerRequest: null };
const queues = cfg.queues.map((name) => new Queue(name, { connection, prefix: cfg.prefix }));
await Promise.all(queues.map((q) => q.waitUntilReady()));

const serverAdapter = new ExpressAdapter();
serverAdapter.setBasePath('/');
createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter });

const app = express();
app.disable('x-powered-by');
app.use('/', serverAdapter.getRouter());
const server = app.listen(cfg.port, '127.0.0.1', () => {
  process.stderr.write(`bull board (read-write) on http://127.0.0.1:${cfg.port}/\n`);
});
server.on('error', (err) => {
  process.stderr.write(`bull board: ${err.message}\n`);
  process.exit(1);
});
let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.close();
  await Promise.allSettled(queues.map((q) => q.close()));
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
"""


# --------------------------------------------------------------------------
# memory of a process


def proc_status_kb(pid: int, fields: tuple[str, ...] = ("VmRSS", "VmHWM")) -> dict[str, int]:
    """``/proc/<pid>/status`` memory lines, in kB (missing when the process is gone)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for raw in f:
                name, _, rest = raw.decode("ascii", "replace").partition(":")
                if name in fields:
                    out[name] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0; the process must be ours)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class RssSampler(threading.Thread):
    """Reads VmRSS of one process every ``interval`` seconds, keeps the largest."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak_kb = 0
        self.samples = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            rss = proc_status_kb(self.pid, ("VmRSS",)).get("VmRSS")
            if rss is not None:
                self.samples += 1
                self.peak_kb = max(self.peak_kb, rss)
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process in process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
            after = stat[stat.rindex(")") + 2 :].split()
            if int(after[2]) != pgid:
                continue
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        members.append((int(entry.name), cmdline.strip()))
    return members


def server_pid(proc: Popen, needle: str) -> int:
    """The pid of the process in ``proc``'s group whose command line contains ``needle``
    (``./run serve`` execs daphne, so it is usually ``proc.pid`` itself)."""
    matches = [pid for pid, cmd in group_members(proc.pid) if needle in cmd]
    if proc.pid in matches:
        return proc.pid
    if matches:
        return min(matches)
    raise SystemExit(f"no process with {needle!r} in its command line in group {proc.pid}")


# --------------------------------------------------------------------------
# one retry-all


@dataclass
class Run:
    server: str
    queue: str
    pid: int
    request: str
    status: int = 0
    answer: str = ""
    duration_s: float = 0.0
    rss_before_kb: int = 0
    peak_sampled_kb: int = 0
    peak_hwm_kb: int | None = None
    rss_after_kb: int = 0
    samples: int = 0
    redis_cmds: int = 0
    redis_breakdown: dict[str, int] = field(default_factory=dict)
    failed_left: int = -1
    waiting: int = -1
    problems: list[str] = field(default_factory=list)

    @property
    def peak_kb(self) -> int:
        return max(self.peak_sampled_kb, self.peak_hwm_kb or 0, self.rss_before_kb)


def auth_headers(server: str) -> dict[str, str]:
    if server != "bullpen":
        return {}
    token = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def http_call(
    port: int, method: str, path: str, headers: dict[str, str], timeout: float
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, headers={"Content-Length": "0", **headers})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def follow_action(
    port: int, accepted: bytes, headers: dict[str, str], deadline: float
) -> tuple[int, bytes]:
    """Poll a 202's status URL until the action has finished; its last status."""
    url = json.loads(accepted)["statusUrl"]
    while True:
        status, body = http_call(port, "GET", url, headers, max(1.0, deadline - time.monotonic()))
        if status != 200 or json.loads(body).get("finished") or time.monotonic() > deadline:
            return status, body
        time.sleep(0.02)


def retry_all(
    server: str,
    port: int,
    pid: int,
    queue: str,
    count: int,
    r: redis_py.Redis,
    prefix: str,
    timeout: float,
    settle: float,
) -> Run:
    method, path_t = RETRY_REQUESTS[server]
    path = path_t.format(queue=queue)
    run = Run(server, queue, pid, f"{method} {path}")
    headers = auth_headers(server)

    # Warm the server up (first request, lazy imports, connections), then let it settle.
    for _ in range(3):
        status, _body = http_get(port, READY_PATHS[server])
        if status != 200:
            run.problems.append(f"warm-up GET {READY_PATHS[server]}: HTTP {status}")
    time.sleep(settle)
    run.rss_before_kb = proc_status_kb(pid).get("VmRSS", 0)
    hwm_reset = reset_peak_rss(pid)

    sampler = RssSampler(pid)
    before_calls = command_calls(r)
    sampler.start()
    t0 = time.monotonic()
    try:
        run.status, body = http_call(port, method, path, headers, timeout)
        if run.status == 202:  # Bullpen runs it in the background: follow it to its end
            run.status, body = follow_action(port, body, headers, t0 + timeout)
    except OSError as exc:
        run.status, body = 0, str(exc).encode()
    run.duration_s = time.monotonic() - t0
    sampler.stop()
    after_calls = command_calls(r)
    run.peak_sampled_kb = sampler.peak_kb
    run.samples = sampler.samples
    if hwm_reset:
        run.peak_hwm_kb = proc_status_kb(pid).get("VmHWM")
    else:
        run.problems.append("could not reset VmHWM: peak is the sampled VmRSS only")
    diff = calls_diff(before_calls, after_calls)
    run.redis_breakdown = dict(sorted(diff.items(), key=lambda kv: -kv[1]))
    run.redis_cmds = sum(diff.values())
    run.answer = body.decode(errors="replace")[:300]

    time.sleep(settle)
    run.rss_after_kb = proc_status_kb(pid).get("VmRSS", 0)

    # What the answer says, and what Redis says.
    if run.status != 200:
        run.problems.append(f"HTTP {run.status}: {run.answer[:200]}")
    else:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        reported = None
        if isinstance(data, dict):
            reported = data.get("count") if server == "bullpen" else data.get("retried")
        if reported != count:
            run.problems.append(f"answer reports {reported!r} jobs, expected {count}")
    run.failed_left = int(r.zcard(f"{prefix}:{queue}:failed"))
    run.waiting = int(r.llen(f"{prefix}:{queue}:wait"))
    if run.failed_left != 0:
        run.problems.append(f"{run.failed_left} jobs still failed")
    if run.waiting != count:
        run.problems.append(f"{run.waiting} jobs waiting, expected {count}")
    return run


# --------------------------------------------------------------------------
# report


def mb(kb: int | None) -> str:
    return "—" if kb is None else f"{kb / 1024:.1f}"


def render(runs: list[Run], meta: dict[str, str], count: int) -> str:
    lines = [f"## Retry-all of {count:,} failed jobs: Bullpen vs Bull Board — {meta['date']}", ""]
    for key in ("cpu", "redis", "versions", "data", "seed", "memory"):
        if meta.get(key):
            lines.append(f"- {key}: {meta[key]}")
    lines.append("")
    head = [
        "server",
        "N",
        "duration s",
        "jobs/s",
        "RSS before MB",
        "peak RSS MB",
        f"peak {MINUS} before MB",
        "RSS after MB",
        "Redis cmds",
        "check",
    ]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|" + "---:|" * (len(head) - 2) + "---|")
    for run in runs:
        ok = not run.problems
        lines.append(
            "| "
            + " | ".join(
                [
                    SERVER_TITLES[run.server],
                    f"{count:,}",
                    f"{run.duration_s:.2f}",
                    f"{count / run.duration_s:,.0f}" if run.duration_s > 0 else "—",
                    mb(run.rss_before_kb),
                    mb(run.peak_kb),
                    mb(run.peak_kb - run.rss_before_kb),
                    mb(run.rss_after_kb),
                    f"{run.redis_cmds:,}",
                    "ok" if ok else "**failed**",
                ]
            )
            + " |"
        )
    by = {run.server: run for run in runs}
    if "bullboard" in by and "bullpen" in by:
        bb, bp = by["bullboard"], by["bullpen"]
        lines.append("")
        if bp.duration_s > 0 and bb.duration_s > 0:
            lines.append(
                f"Bullpen / Bull Board: duration {bp.duration_s / bb.duration_s:.2f}{TIMES}, "
                f"peak {MINUS} before {mb(bp.peak_kb - bp.rss_before_kb)} vs "
                f"{mb(bb.peak_kb - bb.rss_before_kb)} MB, Redis commands "
                f"{bp.redis_cmds / max(1, bb.redis_cmds):.2f}{TIMES}."
            )
    lines.append("")
    lines.append("Requests (one per server, each on its own queue of N failed jobs):")
    for run in runs:
        lines.append(
            f"- {SERVER_TITLES[run.server]} (pid {run.pid}, {run.queue}): `{run.request}` → "
            f"HTTP {run.status} `{run.answer.strip()[:160]}`"
        )
    lines.append("")
    lines.append("Redis commands during the request, by command:")
    for run in runs:
        top = ", ".join(f"{k} {v:,}" for k, v in list(run.redis_breakdown.items())[:10])
        lines.append(f"- {SERVER_TITLES[run.server]}: {top or '—'}")
    lines.append("")
    lines.append("Afterwards (failed set / wait list):")
    for run in runs:
        lines.append(
            f"- {SERVER_TITLES[run.server]}: {run.failed_left:,} failed, {run.waiting:,} waiting"
            + (f" — problems: {'; '.join(run.problems)}" if run.problems else "")
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# main


def start_redis(procs: Processes, port: int, tmp: Path) -> str:
    url = f"redis://127.0.0.1:{port}/0"
    log(f"starting redis-server on port {port}")
    rproc = procs.start(
        "redis-server",
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp),
        ],
        log_path=tmp / "redis.log",
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            redis_py.Redis.from_url(url).ping()
            return url
        except redis_py.ConnectionError:
            if rproc.poll() is not None or time.monotonic() > deadline:
                sys.exit(
                    "redis-server did not start:\n"
                    + (tmp / "redis.log").read_text(errors="replace")
                )
            time.sleep(0.1)


def seed(redis_url: str, prefix: str, queue: str, count: int, timeout: float) -> dict[str, Any]:
    cmd = [
        "node",
        str(NODE_DIR / "seed_failed.mjs"),
        "--redis",
        redis_url,
        "--prefix",
        prefix,
        "--queue",
        queue,
        "--count",
        str(count),
        "--timeout",
        str(int(timeout)),
    ]
    log("seeding: " + " ".join(shlex.quote(c) for c in cmd))
    try:
        done = subprocess.run(
            cmd, cwd=NODE_DIR, stdout=subprocess.PIPE, text=True, timeout=timeout + 30
        )
    except subprocess.TimeoutExpired:
        sys.exit(f"seeding {queue} did not finish in {timeout:.0f} s")
    if done.returncode != 0:
        sys.exit(f"seeding {queue} failed (exit {done.returncode}):\n{done.stdout}")
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def start_server(
    server: str,
    procs: Processes,
    port: int,
    redis_url: str,
    prefix: str,
    tmp: Path,
    startup_timeout: float,
) -> tuple[Popen, int]:
    log_path = tmp / f"{server}.log"
    if server == "bullboard":
        env = dict(os.environ)
        env["BULLPEN_BENCH_BOARD"] = json.dumps(
            {"redis": redis_url, "prefix": prefix, "port": port, "queues": list(QUEUES.values())}
        )
        proc = procs.start(
            "bull board",
            ["node", "--input-type=module", "-e", BULLBOARD_RW_SCRIPT],
            cwd=NODE_DIR,
            env=env,
            log_path=log_path,
        )
        needle = "node"
    else:
        if not (REPO_DIR / "run").exists():
            sys.exit("./run not found: Bullpen cannot be started")
        env = dict(os.environ)
        env.update(
            REDIS_URL=redis_url,
            BULLMQ_PREFIX=prefix,
            HOST="127.0.0.1",
            PORT=str(port),
            DASHBOARD_USERNAME=USERNAME,
            DASHBOARD_PASSWORD=PASSWORD,
        )
        proc = procs.start("bullpen", ["./run", "serve"], cwd=REPO_DIR, env=env, log_path=log_path)
        needle = "daphne"
    log(f"waiting for {SERVER_TITLES[server]} on port {port}")
    wait_http(port, READY_PATHS[server], proc, SERVER_TITLES[server], startup_timeout, log_path)
    pid = server_pid(proc, needle)
    log(f"{SERVER_TITLES[server]} is pid {pid}")
    return proc, pid


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
