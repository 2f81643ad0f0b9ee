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
import time
from pathlib import Path

MANY_DIR = Path(__file__).resolve().parent
BENCH_DIR = MANY_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

try:
    import redis as redis_py
    from playwright.sync_api import Browser, sync_playwright
    from playwright.sync_api import Error as PlaywrightError
except ImportError as exc:  # pragma: no cover - the project venv has them
    sys.exit(f"manyqueues_bench.py needs {exc.name!r}: run it with ./.venv/bin/python")

from machine import (  # noqa: E402 - bench/ is on sys.path only from here on
    bullpen_version,
    cmd_output,
    cpu_model,
    node_pkg_version,
    python_pkg_version,
)
from page_load import CHROMIUM_ARGS, CHROMIUM_PATH, measure, open_page  # noqa: E402
from redis_load import CommandCounter, net_of  # noqa: E402
from report import TITLES, render, verdicts  # noqa: E402
from results import ApiCall, IdleViewer, ServerResult, SizeResult  # noqa: E402
from servers import Popen, Processes, free_port, parse_range, stop_group  # noqa: E402

REPO_DIR = BENCH_DIR.parent
NODE_DIR = BENCH_DIR / "node"
OUT_DIR = BENCH_DIR / "out"

DEFAULT_BULLPEN_CMD = "./run serve"
# The overview page and the JSON route its UI reads, per server.
PAGES = {"bullpen": "/queues/", "bullboard": "/"}
API_ROUTES = {"bullpen": "/queues/api/queues/", "bullboard": "/api/queues?page=1&jobsPerPage=10"}
# Bull Board first: once measured it sits idle (it only works when its page polls), while
# Bullpen keeps background work running that would blur Bull Board's quiet windows.
ORDER = ("bullboard", "bullpen")
API_CALLS = 3
# Bull Board's UI keeps its settings in localStorage; polling off during a measured load, so
# the load's figures hold the page's own requests and not the polls that follow (the idle
# viewer, with the default settings, measures those).
NO_POLLING = {
    "bullboard": (
        "try { localStorage.setItem('board-settings', "
        "JSON.stringify({ state: { pollingInterval: 0 }, version: 2 })); } catch (e) {}"
    ),
    "bullpen": "",
}


def log(msg: str) -> None:
    print(f"[manyqueues {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# processes


def start_redis(procs: Processes, tmp: Path, ports: tuple[int, int]) -> str:
    port = free_port(*ports)
    log(f"starting redis-server on port {port}")
    proc = procs.start(
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
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 20
    while True:
        try:
            redis_py.Redis.from_url(url).ping()
            return url
        except redis_py.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (tmp / "redis.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"redis-server did not start:\n{tail}") from None
            time.sleep(0.1)


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


# --------------------------------------------------------------------------
# measuring


def seed(
    args: argparse.Namespace, redis_url: str, queues: int, names_file: Path
) -> dict[str, object]:
    cmd = ["node", str(NODE_DIR / "seed_many.mjs"), "--redis", redis_url, "--prefix", args.prefix]
    cmd += ["--queues", str(queues), "--names-out", str(names_file), "--reset"]
    cmd += ["--procs", str(args.seed_procs)]
    log("seeding: " + " ".join(shlex.quote(c) for c in cmd))
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"seeding failed (exit {done.returncode})")
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


def measure_api(
    counter: CommandCounter, port: int, path: str, timeout: float
) -> tuple[list[ApiCall], list[str]]:
    calls = []
    notes = []
    for _ in range(API_CALLS):
        counter.start()
        status, size, ms = timed_get(port, path, timeout)
        window = counter.stop()
        quiet = counter.quiet_window(max(window.seconds, 1.0))
        if status != 200:
            notes.append(f"`GET {path}` answered HTTP {status}")
        calls.append(ApiCall(path, ms, size, net_of(window, quiet).total))
    return calls, notes


def measure_server(
    browser: Browser,
    counter: CommandCounter,
    server: str,
    port: int,
    queues: int,
    args: argparse.Namespace,
) -> ServerResult:
    url = f"http://127.0.0.1:{port}{PAGES[server]}"
    result = ServerResult(server, queues, url)
    title = TITLES[server]

    log(f"{title}: warm-up load of {url}")
    open_page(browser, url, args.load_timeout, args.quiet).close()

    log(f"{title}: the JSON route, {API_CALLS} requests")
    result.api, notes = measure_api(counter, port, API_ROUTES[server], args.load_timeout)
    result.notes.extend(notes)

    for n in range(args.loads):
        counter.start()
        opened = open_page(browser, url, args.load_timeout, args.quiet, NO_POLLING[server])
        window = counter.stop()
        load = measure(opened)
        opened.close()
        time.sleep(1.0)
        commands = net_of(window, counter.quiet_window(window.seconds))
        result.loads.append(load)
        result.view_commands.append(commands)
        log(
            f"{title}: load {n + 1}/{args.loads}: network idle "
            f"{load.network_idle_ms or 0:,.0f} ms, {load.requests} requests, "
            f"{load.total_wire_bytes / 1000:,.0f} KB, {commands.total:,.0f} Redis commands"
        )

    if args.idle_seconds > 0:
        log(f"{title}: idle viewer — {args.idle_seconds:g} s with nobody watching")
        time.sleep(2.0)
        quiet = counter.quiet_window(args.idle_seconds)
        opened = open_page(browser, url, args.load_timeout, args.quiet)
        log(f"{title}: idle viewer — page open; {args.settle:g} s to settle, then the count")
        # Playwright's own wait, not time.sleep: it keeps the page's network events coming.
        opened.page.wait_for_timeout(args.settle * 1000)
        requests_before = len(opened.network.started)
        counter.start()
        opened.page.wait_for_timeout(args.idle_seconds * 1000)
        active = counter.stop()
        requests = len(opened.network.started) - requests_before
        opened.close()
        per_min = 60.0 / active.seconds
        result.idle_viewer = IdleViewer(
            seconds=active.seconds,
            with_viewer_per_min=active.total * per_min,
            quiet_per_min=quiet.total * 60.0 / quiet.seconds,
            requests_per_min=requests * per_min,
            by_command_per_min={
                cmd: n * per_min for cmd, n in net_of(active, quiet).by_command.items()
            },
        )
        log(f"{title}: idle viewer: {result.idle_viewer.net_per_min:,.0f} Redis commands a minute")
    return result


def run_size(
    browser: Browser,
    procs: Processes,
    args: argparse.Namespace,
    redis_url: str,
    servers: list[str],
    queues: int,
    tmp: Path,
    keep_running: bool,
) -> SizeResult:
    client = redis_py.Redis.from_url(redis_url, decode_responses=True)
    client.flushall()
    client.config_resetstat()
    names_file = tmp / f"names-{queues}.txt"
    t0 = time.monotonic()
    summary = seed(args, redis_url, queues, names_file)
    seed_seconds = time.monotonic() - t0
    size = SizeResult(
        queues=queues,
        seed=summary,
        seed_seconds=seed_seconds,
        redis_memory_bytes=int(client.info("memory")["used_memory"]),
        keys=int(client.dbsize()),
    )
    log(f"{queues:,} queues seeded in {seed_seconds:.1f} s ({size.keys:,} keys)")
    counter = CommandCounter(client)
    hlo, hhi = parse_range(args.http_ports)
    for server in servers:
        port = free_port(hlo, hhi)
        log_path = tmp / f"{server}-{queues}.log"
        proc = start_server(procs, server, args, redis_url, names_file, port, log_path)
        log(f"waiting for {TITLES[server]} on port {port}")
        wait_ready(port, API_ROUTES[server], proc, TITLES[server], args.startup_timeout, log_path)
        try:
            result = measure_server(browser, counter, server, port, queues, args)
        except PlaywrightError as error:
            # Bull Board's page crashed Chromium's tab at 10,000 queues: said, not fatal.
            log(f"{TITLES[server]} could not be measured: {error}")
            result = ServerResult(server, queues, PAGES[server])
            result.notes.append(f"the page could not be loaded: {str(error).splitlines()[0]}")
        time.sleep(1.0)
        result.rss_bytes = process_group_rss(proc.pid)
        size.servers[server] = result
        if keep_running:
            log(f"{TITLES[server]} stays up: {result.url}")
        else:
            stop_group(proc, TITLES[server])
    return size


# --------------------------------------------------------------------------
# main


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
