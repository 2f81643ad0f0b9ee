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
import http.client
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import redis as redis_py
except ImportError:  # pragma: no cover - the project venv has it
    sys.exit("http_bench.py needs the 'redis' package: run it with ./.venv/bin/python")

Popen = subprocess.Popen[bytes]

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
NODE_DIR = BENCH_DIR / "node"
OUT_DIR = BENCH_DIR / "out"

BIG_QUEUE = "bench-00"
PER_PAGE = 50
CMD_SAMPLES = 100

# The exact requests each dashboard's UI makes (see bench/README.md).
BULLBOARD_URLS = {
    # What the Bull Board home page polls every few seconds.
    "overview": "/api/queues?page=1&jobsPerPage=10",
    # /queue/bench-00?status=failed&page=N with "jobs per page" set to 50.
    "failed": "/api/queues?activeQueue={queue}&status=failed&page={page}&jobsPerPage={per_page}",
}
BULLPEN_URLS = {
    "overview": "/queues/api/queues/",
    "failed": (
        "/queues/api/queues/{queue}/jobs/?state=failed&page={page}&per_page={per_page}&order=desc"
    ),
}
DEFAULT_BULLPEN_CMD = "./run serve"

SERVERS = ("bullboard", "bullpen")
TIMES = "\N{MULTIPLICATION SIGN}"
SERVER_TITLES = {"bullboard": "Bull Board", "bullpen": "Bullpen"}


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# processes


class Processes:
    """Processes started by the benchmark; each in its own process group."""

    def __init__(self) -> None:
        self.procs: list[tuple[str, Popen]] = []

    def start(
        self,
        name: str,
        argv: list[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        log_path: Path | None = None,
    ) -> Popen:
        out = open(log_path, "wb") if log_path else None
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out if out else subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            if out:
                out.close()
        self.procs.append((name, proc))
        return proc

    def stop_all(self) -> None:
        for name, proc in reversed(self.procs):
            stop_group(proc, name)
        self.procs.clear()


def stop_group(proc: Popen, name: str, grace: float = 10.0) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            log(f"{name} did not stop after SIGTERM; killing")
    # The leader may be gone while children of its group live on.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def free_port(lo: int, hi: int, exclude: Collection[int] = ()) -> int:
    for port in range(lo, hi + 1):
        if port in exclude:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port in {lo}-{hi}")


def parse_range(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


# --------------------------------------------------------------------------
# HTTP helpers


def http_get(port: int, path: str, timeout: float = 60.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def wait_http(port: int, path: str, proc: Popen, name: str, timeout: float, log_path: Path) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
            raise SystemExit(
                f"{name} exited with code {proc.returncode} before it answered:\n{tail}"
            )
        try:
            status, _ = http_get(port, path, timeout=30)
            if status == 200:
                return
            last = f"HTTP {status}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.3)
    tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
    raise SystemExit(f"{name} not ready on port {port} after {timeout:.0f}s ({last}):\n{tail}")


# --------------------------------------------------------------------------
# wrk


@dataclass
class WrkResult:
    p50_ms: float
    p99_ms: float
    rps: float
    requests: int
    errors: str = ""


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _to_ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not m:
        raise ValueError(f"bad wrk latency {text!r}")
    return float(m.group(1)) * _UNITS_MS[m.group(2)]


def parse_wrk(out: str) -> WrkResult:
    def pct(p: str) -> float:
        m = re.search(rf"^\s*{p}%\s+(\S+)\s*$", out, re.M)
        if not m:
            raise ValueError(f"no {p}% line in wrk output:\n{out}")
        return _to_ms(m.group(1))

    m_rps = re.search(r"^Requests/sec:\s+([\d.]+)", out, re.M)
    m_req = re.search(r"^\s*(\d+) requests in", out, re.M)
    if not (m_rps and m_req):
        raise ValueError(f"unexpected wrk output:\n{out}")
    rps = float(m_rps.group(1))
    requests = int(m_req.group(1))
    errors = []
    m = re.search(r"Socket errors: (.*)", out)
    if m:
        errors.append("socket errors: " + m.group(1).strip())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errors.append(f"non-2xx: {m.group(1)}")
    return WrkResult(pct("50"), pct("99"), rps, requests, "; ".join(errors))


def run_wrk(url: str, connections: int, threads: int, duration: float) -> WrkResult:
    argv = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(duration))}s",
        "--timeout",
        "60s",
        "--latency",
        url,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 120)
    if proc.returncode != 0:
        raise SystemExit(f"wrk failed ({proc.returncode}): {proc.stderr or proc.stdout}")
    return parse_wrk(proc.stdout)


# --------------------------------------------------------------------------
# Redis commands per request


def command_calls(r: redis_py.Redis) -> dict[str, int]:
    stats = r.info("commandstats")
    calls = {}
    for key, val in stats.items():
        name = key[len("cmdstat_") :] if key.startswith("cmdstat_") else key
        calls[name] = int(val["calls"]) if isinstance(val, dict) else 0
    return calls


def calls_diff(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    diff = {}
    for name, n in after.items():
        d = n - before.get(name, 0)
        if d:
            diff[name] = d
    # The first INFO shows up in the second one's figures.
    if diff.get("info"):
        diff["info"] -= 1
        if not diff["info"]:
            del diff["info"]
    return diff


@dataclass
class CmdResult:
    per_request: float
    breakdown: dict[str, float]
    idle_per_request: float
    bytes_per_response: int
    status_errors: int


def measure_commands(r: redis_py.Redis, port: int, path: str, samples: int) -> CmdResult:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        # One request outside the window so the keep-alive connection is open.
        conn.request("GET", path)
        conn.getresponse().read()
        before = command_calls(r)
        t0 = time.monotonic()
        size = 0
        bad = 0
        for _ in range(samples):
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            size += len(body)
            if resp.status != 200:
                bad += 1
        elapsed = time.monotonic() - t0
        after = command_calls(r)
    finally:
        conn.close()
    active = calls_diff(before, after)
    # Whatever Redis ran with nobody asking (background tasks of either
    # server) over the same time, subtracted.
    idle_before = command_calls(r)
    time.sleep(min(elapsed, 10.0))
    idle = calls_diff(idle_before, command_calls(r))
    idle_scale = elapsed / min(elapsed, 10.0) if elapsed > 0 else 1.0
    idle_total = sum(idle.values()) * idle_scale
    total = sum(active.values()) - idle_total
    breakdown = {}
    for name, n in active.items():
        v = (n - idle.get(name, 0) * idle_scale) / samples
        if abs(v) >= 0.005:
            breakdown[name] = round(v, 2)
    return CmdResult(
        per_request=max(0.0, total / samples),
        breakdown=dict(sorted(breakdown.items(), key=lambda kv: -kv[1])),
        idle_per_request=idle_total / samples,
        bytes_per_response=size // samples,
        status_errors=bad,
    )


# --------------------------------------------------------------------------
# environment facts


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def node_pkg_version(name: str) -> str:
    try:
        data = json.loads((NODE_DIR / "node_modules" / name / "package.json").read_text())
        return str(data["version"])
    except (OSError, KeyError, ValueError):
        return "?"


def cmd_output(argv: list[str], cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=30)
        return (proc.stdout or proc.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def bullpen_version() -> str:
    rev = cmd_output(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_DIR)
    dirty = cmd_output(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_DIR)
    return f"git {rev}{' (+ uncommitted changes)' if dirty and dirty != '?' else ''}"


def python_pkg_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return "?"


# --------------------------------------------------------------------------
# report


@dataclass
class Cell:
    c1: WrkResult | None = None
    c10: WrkResult | None = None
    cmds: CmdResult | None = None
    note: str = ""


@dataclass
class Page:
    key: str
    title: str
    urls: dict[str, str]
    cells: dict[str, Cell] = field(default_factory=dict)


def fmt_num(v: float | None, digits: int = 1) -> str:
    if v is None:
        return "—"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.{max(digits, 2)}f}"


# (label, getter, lower is better)
METRICS: list[tuple[str, Callable[[Cell], float | None], bool]] = [
    ("p50 ms, 1 conn", lambda c: c.c1.p50_ms if c.c1 else None, True),
    ("p99 ms, 1 conn", lambda c: c.c1.p99_ms if c.c1 else None, True),
    ("req/s, 1 conn", lambda c: c.c1.rps if c.c1 else None, False),
    ("p50 ms, 10 conn", lambda c: c.c10.p50_ms if c.c10 else None, True),
    ("p99 ms, 10 conn", lambda c: c.c10.p99_ms if c.c10 else None, True),
    ("req/s, 10 conn", lambda c: c.c10.rps if c.c10 else None, False),
    ("Redis cmds/req", lambda c: c.cmds.per_request if c.cmds else None, True),
    ("response bytes", lambda c: c.cmds.bytes_per_response if c.cmds else None, True),
]

# (page key, metric label) -> (op, bound, description)
TARGETS = {
    ("overview", "p50 ms, 1 conn"): ("<=", 0.5, f"overview p50 ≤ 0.5{TIMES} Bull Board"),
    ("overview", "req/s, 10 conn"): (">=", 1.0, "overview req/s at 10 conn ≥ Bull Board"),
    ("failed1", "p50 ms, 1 conn"): ("<=", 0.5, f"failed page 1 p50 ≤ 0.5{TIMES} Bull Board"),
    ("failed1", "req/s, 10 conn"): (">=", 1.0, "failed page 1 req/s at 10 conn ≥ Bull Board"),
    ("faileddeep", "p50 ms, 1 conn"): ("<=", 0.5, f"deep failed page p50 ≤ 0.5{TIMES} Bull Board"),
    ("faileddeep", "req/s, 10 conn"): (">=", 1.0, "deep failed page req/s at 10 conn ≥ Bull Board"),
}


def render(
    pages: list[Page], servers: list[str], meta: dict[str, str]
) -> tuple[str, list[dict[str, Any]]]:
    lines = []
    lines.append(f"## Bullpen vs Bull Board — {meta['date']}")
    lines.append("")
    for k in (
        "cpu",
        "redis",
        "data",
        "seed",
        "versions",
        "wrk",
    ):
        if meta.get(k):
            lines.append(f"- {k}: {meta[k]}")
    lines.append("")
    both = "bullboard" in servers and "bullpen" in servers
    head = ["page", "metric"] + [SERVER_TITLES[s] for s in servers]
    if both:
        head += ["Bullpen / Bull Board", "target", "met"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append(
        "|"
        + "|".join(
            ["---"] * 2
            + ["---:"] * (len(head) - 2 - (3 if both else 0))
            + (["---:", "---", "---"] if both else [])
        )
        + "|"
    )
    verdicts = []
    for page in pages:
        for n_metric, (label, get, _lower_better) in enumerate(METRICS):
            vals = []
            for s in servers:
                cell = page.cells.get(s)
                vals.append(get(cell) if cell else None)
            row = [f"**{page.title}**" if n_metric == 0 else "", label] + [fmt_num(v) for v in vals]
            if both:
                bb, bp = vals[0], vals[1]
                ratio = (bp / bb) if (bb and bp is not None) else None
                row.append(f"{ratio:.2f}{TIMES}" if ratio is not None else "—")
                target = TARGETS.get((page.key, label))
                if target and ratio is not None:
                    op, bound, desc = target
                    met = ratio <= bound if op == "<=" else ratio >= bound
                    row += [
                        f"{op.replace('<=', '≤').replace('>=', '≥')} {bound}{TIMES}",
                        "yes" if met else "**no**",
                    ]
                    verdicts.append({"target": desc, "ratio": round(ratio, 3), "met": met})
                else:
                    row += ["", ""]
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(
        "Ratio = Bullpen ÷ Bull Board "
        "(latency and commands: lower is better; req/s: higher is better)."
    )
    if verdicts:
        lines.append("")
        n_met = sum(1 for v in verdicts if v["met"])
        lines.append(f"Targets met: {n_met}/{len(verdicts)}")
        for v in verdicts:
            lines.append(
                f"- {'met' if v['met'] else 'NOT met'}: {v['target']} (ratio {v['ratio']:.2f})"
            )
    lines.append("")
    lines.append("URLs:")
    for page in pages:
        for s in servers:
            lines.append(f"- {page.title}, {SERVER_TITLES[s]}: `GET {page.urls[s]}`")
    details = []
    for page in pages:
        for s in servers:
            cell = page.cells.get(s)
            if cell and cell.cmds and cell.cmds.breakdown:
                top = ", ".join(f"{k} {v:g}" for k, v in list(cell.cmds.breakdown.items())[:12])
                extra = (
                    f" (idle noise subtracted: {cell.cmds.idle_per_request:.2f}/req)"
                    if cell.cmds.idle_per_request
                    else ""
                )
                details.append(f"- {page.title}, {SERVER_TITLES[s]}: {top}{extra}")
            for w, name in ((cell and cell.c1, "1 conn"), (cell and cell.c10, "10 conn")):
                if w and w.errors:
                    details.append(
                        f"- {page.title}, {SERVER_TITLES[s]}, {name}: wrk reported {w.errors}"
                    )
            if cell and cell.cmds and cell.cmds.status_errors:
                details.append(
                    f"- {page.title}, {SERVER_TITLES[s]}: {cell.cmds.status_errors} non-200 answers"
                )
            if cell and cell.note:
                details.append(f"- {page.title}, {SERVER_TITLES[s]}: {cell.note}")
    if details:
        lines.append("")
        lines.append("Redis commands per request, by command (and anomalies):")
        lines.extend(details)
    return "\n".join(lines) + "\n", verdicts


# --------------------------------------------------------------------------
# response checks


def check_response(server: str, page_key: str, body: bytes) -> str:
    """A short note if the answer does not look like what was asked for."""
    try:
        data = json.loads(body)
    except ValueError:
        return "answer is not JSON"
    if page_key == "overview":
        return ""
    if server == "bullboard":
        for q in data.get("queues", []):
            if q.get("name") == BIG_QUEUE:
                n = len(q.get("jobs", []))
                return "" if n == PER_PAGE else f"{n} jobs in the answer, not {PER_PAGE}"
        return f"{BIG_QUEUE} missing from the answer"
    # Bullpen: accept a top-level list or the first list found under a usual key.
    jobs = data if isinstance(data, list) else None
    if jobs is None and isinstance(data, dict):
        for key in ("jobs", "results", "items", "data"):
            if isinstance(data.get(key), list):
                jobs = data[key]
                break
    if jobs is None:
        return ""
    return "" if len(jobs) == PER_PAGE else f"{len(jobs)} jobs in the answer, not {PER_PAGE}"


# --------------------------------------------------------------------------
# main


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
    lo, hi = parse_range(args.redis_ports)
    hlo, hhi = parse_range(args.http_ports)

    # Node dependencies, installed from the lock file when missing.
    if not (NODE_DIR / "node_modules" / "bullmq").exists():
        log("installing bench/node dependencies (npm ci)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)

    # Redis.
    if args.redis:
        redis_url = args.redis
    else:
        rport = free_port(lo, hi)
        redis_url = f"redis://127.0.0.1:{rport}/0"
        log(f"starting redis-server on port {rport}")
        rproc = procs.start(
            "redis-server",
            [
                "redis-server",
                "--port",
                str(rport),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(tmp),
                "--maxclients",
                "10000",
            ],
            log_path=tmp / "redis.log",
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                redis_py.Redis.from_url(redis_url).ping()
                break
            except redis_py.ConnectionError:
                if rproc.poll() is not None or time.monotonic() > deadline:
                    sys.exit(
                        "redis-server did not start:\n"
                        + (tmp / "redis.log").read_text(errors="replace")
                    )
                time.sleep(0.1)
    r = redis_py.Redis.from_url(redis_url, decode_responses=True)
    rinfo = r.info("server")
    meta["redis"] = (
        f"{redis_url} (redis {rinfo.get('redis_version')}"
        f"{', started by the benchmark' if not args.redis else ''})"
    )

    # Seed.
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
        meta["seed"] = f"{seed_s:.1f} s (scale {args.scale:g}, {summary.get('mode')} mode)"
        log(f"seeded in {seed_s:.1f} s")
    else:
        meta["seed"] = "skipped (--no-seed)"

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

    # Servers.
    ports: dict[str, int] = {}
    used: set[int] = set()
    for s in servers:
        port = free_port(hlo, hhi, exclude=used)
        used.add(port)
        ports[s] = port
        log_path = tmp / f"{s}.log"
        if s == "bullboard":
            proc = procs.start(
                "bull board",
                [
                    "node",
                    str(NODE_DIR / "bullboard.mjs"),
                    "--redis",
                    redis_url,
                    "--prefix",
                    args.prefix,
                    "--port",
                    str(port),
                ],
                cwd=NODE_DIR,
                log_path=log_path,
            )
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
    meta["versions"] = ", ".join(versions)
    meta["cpu"] = f"{cpu_model()} ({os.cpu_count()} CPUs), {platform.system()} {platform.release()}"
    wrk_version = cmd_output(["wrk", "-v"]).splitlines()[0].split(" [")[0]
    meta["wrk"] = (
        f"{wrk_version}; "
        f"{args.duration:g} s per run after {args.warmup:g} s warm-up; "
        f"1 conn = -t1 -c1, 10 conn = -t2 -c10; Redis cmds over {args.samples} sequential requests"
    )

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
