"""Bullpen beside Bull Board 9.10 on one BullMQ 6 PostgreSQL store: the overview and a failed
tab in Chromium, their JSON routes, and what each costs the database.

For each ``--queues`` count a PostgreSQL 15 of its own (``pg_stat_statements`` loaded) is
seeded by Node BullMQ (``bench/node/seed_postgres.mjs``: its schema migrated, ``--waiting``
jobs in every queue, ``--failed`` failed jobs with stack traces in ``pg-000``); Bullpen (daphne,
the store its only connection) and Bull Board (``bench/node/bullboard.mjs --postgres``, one
shared pool) read it. Rounds interleave the dashboards (who goes first alternates):

- the overview and ``pg-000``'s failed tab (page 1, each dashboard's default page size), each
  in a fresh Chromium context until the network is idle: requests, bytes, time;
- their JSON routes (Bullpen ``api/queues/`` and ``api/queues/pg-000/jobs/?state=failed``,
  Bull Board ``/api/queues`` without and with ``activeQueue``, 50 jobs a page): median time;
- the store's statements, rows returned and buffers touched per view (``pg_stat_statements``,
  of the dashboard's own role: each signs in as its own), counted until two seconds after it;
- an idle viewer a minute: the overview left open ``--idle-seconds`` (Bull Board polls every
  5 s, Bullpen's page listens on its websocket): statements, rows, buffers and committed
  transactions (``pg_stat_database``), beside the same window with nobody watching.

Run it alone (it starts and stops everything it uses)::

    .venv/bin/python bench/postgres/postgres_vs_bullboard.py --queues 20 200 --rounds 3
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench" / "manyqueues")]

from page_load import CHROMIUM_ARGS, CHROMIUM_PATH, measure, open_page  # noqa: E402

from tests.support.servers.live_server import start_bullpen, stop_bullpen  # noqa: E402
from tests.support.servers.postgres_server import PostgresServer  # noqa: E402
from tests.support.servers.redis_server import free_port  # noqa: E402

NODE = ROOT / "bench" / "node"
# bench/node has no `pg`; the interop peer's node_modules has it (see seed_postgres.mjs).
NODE_ENV = {**os.environ, "NODE_PATH": str(ROOT / "tests" / "interop" / "node_modules")}
FAILED_QUEUE = "pg-000"
API_RUNS = 15
SETTLE_S = 2.0
# The role each dashboard signs in to the store as.
ROLES = {"Bullpen": "bullpen", "Bull Board": "board"}


class StatsServer(PostgresServer):
    """The tests' PostgreSQL with ``pg_stat_statements`` loaded at start."""

    def _run(self, argv: list[str]) -> None:
        super()._run(argv)
        if argv[0].endswith("initdb"):
            with (self.data / "postgresql.conf").open("a") as conf:
                conf.write("shared_preload_libraries = 'pg_stat_statements'\n")


class Probe:
    """The store's counters, read on a session of a role of its own (left out of them)."""

    def __init__(self, postgres: StatsServer) -> None:
        import psycopg

        postgres.psql("CREATE EXTENSION pg_stat_statements")
        postgres.psql("CREATE ROLE probe LOGIN IN ROLE pg_read_all_stats")
        # Bull Board signs in as a role of its own, so each dashboard's statements are its own.
        postgres.psql("CREATE ROLE board LOGIN SUPERUSER")
        url = postgres.url.replace("bullpen@", "probe@")
        self.session = psycopg.connect(url, autocommit=True)

    def read(self, role: str) -> dict[str, float]:
        row = self.session.execute(
            "SELECT coalesce(sum(calls), 0), coalesce(sum(rows), 0),"
            " coalesce(sum(shared_blks_hit + shared_blks_read), 0),"
            " (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())"
            " FROM pg_stat_statements"
            " WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = %s)",
            (role,),
        ).fetchone()
        assert row is not None
        names = ("statements", "rows", "buffers", "transactions")
        return dict(zip(names, map(float, row), strict=True))

    def since(self, role: str, before: dict[str, float]) -> dict[str, float]:
        now = self.read(role)
        return {key: now[key] - before[key] for key in now}


def get(url: str, timeout: float = 60.0) -> bytes:
    """A GET that must answer 200 (http.client: no proxy from the environment)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=timeout)
    try:
        connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
        answer = connection.getresponse()
        body = answer.read()
    finally:
        connection.close()
    if answer.status != 200:
        raise SystemExit(f"{url}: {answer.status}")
    return body


def seed(postgres: StatsServer, queues: int, waiting: int, failed: int) -> dict[str, Any]:
    argv = ["node", str(NODE / "seed_postgres.mjs"), "--postgres", postgres.url]
    argv += ["--queues", str(queues), "--waiting", str(waiting), "--failed", str(failed)]
    done = subprocess.run(argv, env=NODE_ENV, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"seeding failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def start_bullboard(postgres: StatsServer, queues: int, folder: Path) -> tuple[Any, str]:
    names = folder / "names.txt"
    names.write_text("".join(f"pg-{n:03d}\n" for n in range(queues)))
    port = free_port()
    url = postgres.url.replace("bullpen@", "board@")
    argv = ["node", str(NODE / "bullboard.mjs"), "--postgres", url, "--port", str(port)]
    log = (folder / "bullboard.log").open("w")
    process = subprocess.Popen(
        [*argv, "--names-file", str(names)], env=NODE_ENV, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            get(f"{url}/api/queues?page=1&jobsPerPage=10", timeout=30)
            return process, url
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.2)
    process.terminate()
    raise SystemExit(f"Bull Board did not start: {(folder / 'bullboard.log').read_text()[-2000:]}")


def routes(bullpen: str, bullboard: str) -> dict[str, dict[str, str]]:
    failed = f"{FAILED_QUEUE}/jobs/?state=failed&page=1&per_page=50&order=desc"
    board_failed = f"activeQueue={FAILED_QUEUE}&status=failed&page=1&jobsPerPage=50"
    return {
        "Bullpen": {
            "overview": f"{bullpen}/queues/",
            "failed tab": f"{bullpen}/queues/q/{FAILED_QUEUE}/?state=failed",
            "overview API": f"{bullpen}/queues/api/queues/",
            "failed API": f"{bullpen}/queues/api/queues/{failed}",
        },
        "Bull Board": {
            "overview": f"{bullboard}/",
            "failed tab": f"{bullboard}/queue/{FAILED_QUEUE}?status=failed",
            "overview API": f"{bullboard}/api/queues?page=1&jobsPerPage=10",
            "failed API": f"{bullboard}/api/queues?{board_failed}",
        },
    }


def view(browser: Any, probe: Probe, role: str, url: str) -> dict[str, float]:
    before = probe.read(role)
    opened = open_page(browser, url, timeout_s=60, quiet_s=1.5)
    load = measure(opened)
    opened.close()
    time.sleep(SETTLE_S)
    if load.status != 200 or load.network_idle_ms is None:
        raise SystemExit(f"{url}: status {load.status}, {load.note or 'no idle'}")
    return {
        "idle_ms": load.network_idle_ms,
        "requests": load.requests,
        "kb": load.total_wire_bytes / 1024,
        **probe.since(role, before),
    }


def api(probe: Probe, role: str, url: str) -> dict[str, float]:
    times = []
    before = probe.read(role)
    for _ in range(API_RUNS):
        started = time.perf_counter()
        get(url)
        times.append(time.perf_counter() - started)
    cost = probe.since(role, before)
    return {
        "ms": statistics.median(times) * 1000,
        **{key: value / API_RUNS for key, value in cost.items()},
    }


def idle_minute(
    browser: Any, probe: Probe, role: str, url: str | None, seconds: float
) -> dict[str, float]:
    opened = open_page(browser, url, timeout_s=60, quiet_s=1.5) if url else None
    # Past the load, and past PostgreSQL's 10 s at most before a session's counts reach
    # pg_stat_database: only what an open page keeps doing is counted.
    time.sleep(11.0)
    before = probe.read(role)
    if opened:
        opened.page.wait_for_timeout(seconds * 1000)  # the page's timers and socket keep running
    else:
        time.sleep(seconds)
    cost = probe.since(role, before)
    if opened:
        opened.close()
    return {key: value * 60 / seconds for key, value in cost.items()}


def run_one(queues: int, args: argparse.Namespace, browser: Any) -> None:
    postgres = StatsServer()
    postgres.start()
    folder = Path(tempfile.mkdtemp(prefix="bullpen-pg-vs-board-"))
    servers: list[Any] = []
    board: Any = None
    try:
        seeded = seed(postgres, queues, args.waiting, args.failed)
        probe = Probe(postgres)
        extra = {
            "BULLPEN_TEST_CONNECTIONS": json.dumps({"pg": {"URL": postgres.url}}),
            "BULLPEN_TEST_TASKS": "0",
            "BULLPEN_TEST_DISCOVERY_INTERVAL": "30",
        }
        servers.append(start_bullpen("redis://127.0.0.1:1/0", folder / "daphne.log", extra))
        board, board_url = start_bullboard(postgres, queues, folder)
        urls = routes(servers[0].url, board_url)
        for named in urls.values():  # warm: discovery, templates, Bull Board's first reads
            for url in named.values():
                get(url, timeout=120)
        found: dict[str, dict[str, list[dict[str, float]]]] = {d: {} for d in urls}
        load = [os.getloadavg()[0]]
        for round_ in range(args.rounds):
            order = list(urls) if round_ % 2 == 0 else list(reversed(urls))
            for dashboard in order:
                role = ROLES[dashboard]
                for what, url in urls[dashboard].items():
                    measured = (
                        api(probe, role, url) if "API" in what else view(browser, probe, role, url)
                    )
                    found[dashboard].setdefault(what, []).append(measured)
            load.append(os.getloadavg()[0])
        idle = {
            f"nobody watching, {d}": idle_minute(browser, probe, ROLES[d], None, args.idle_seconds)
            for d in urls
        }
        for d in urls:
            idle[f"{d}'s overview open"] = idle_minute(
                browser, probe, ROLES[d], urls[d]["overview"], args.idle_seconds
            )
        load.append(os.getloadavg()[0])
        report(queues, seeded, found, idle, args, load)
    finally:
        for server in servers:
            stop_bullpen(server)
        if board is not None:
            board.terminate()
            board.wait(10)
        postgres.stop()


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def report(
    queues: int,
    seeded: dict[str, Any],
    found: dict[str, dict[str, list[dict[str, float]]]],
    idle: dict[str, dict[str, float]],
    args: argparse.Namespace,
    load: list[float],
) -> None:
    print(f"\n### {queues} queues ({args.waiting} jobs waiting in each, {FAILED_QUEUE}: ", end="")
    print(f"{seeded.get('counts', {}).get('failed', 0)} failed), {args.rounds} rounds, ", end="")
    print(f"load {min(load):.1f} to {max(load):.1f}\n")
    print("| median | dashboard | network idle ms | requests | KB | statements | rows | buffers |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for what in ("overview", "failed tab"):
        for dashboard, views in found.items():
            runs = views[what]
            print(f"| {what} | {dashboard} | {median(runs, 'idle_ms'):.0f} | ", end="")
            print(f"{median(runs, 'requests'):.0f} | {median(runs, 'kb'):.0f} | ", end="")
            print(f"{median(runs, 'statements'):.0f} | {median(runs, 'rows'):.0f} | ", end="")
            print(f"{median(runs, 'buffers'):.0f} |")
    print("\n| median per request | dashboard | ms | statements | rows | buffers |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for what in ("overview API", "failed API"):
        for dashboard, views in found.items():
            runs = views[what]
            print(f"| {what} | {dashboard} | {median(runs, 'ms'):.1f} | ", end="")
            print(f"{median(runs, 'statements'):.1f} | {median(runs, 'rows'):.0f} | ", end="")
            print(f"{median(runs, 'buffers'):.0f} |")
    print(
        f"\n| a minute ({args.idle_seconds:.0f} s measured) | statements | rows | buffers |", end=""
    )
    print(" transactions |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, cost in idle.items():
        print(f"| {label} | {cost['statements']:.0f} | {cost['rows']:.0f} | ", end="")
        print(f"{cost['buffers']:.0f} | {cost['transactions']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--queues", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--waiting", type=int, default=10)
    parser.add_argument("--failed", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
        try:
            for queues in args.queues:
                run_one(queues, args, browser)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
