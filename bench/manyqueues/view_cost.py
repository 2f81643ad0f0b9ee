#!/usr/bin/env python3
"""What one view of the overview costs Redis, with and without a live reader's counts.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/manyqueues/view_cost.py --queues 2000
    ./.venv/bin/python bench/manyqueues/view_cost.py --redis redis://127.0.0.1:6960/0 --queues 50000

Steps: start a throw-away ``redis-server`` and seed it with ``bench/node/seed_many.mjs`` (or
use ``--redis``, already seeded); start Bullpen (``./run serve``); wait ``--quiet`` seconds with
nobody watching; then count Redis's commands (``INFO commandstats``, by command) and time each
of: a view of ``/queues/`` with nobody watching; a first open in Chromium (page, socket and a
reader that wakes, counted for 4 s); after ``--settle`` seconds, ``--repeats`` times: a view of
the page and of ``api/queues/`` while that page watches, and a page load in a fresh context
(network idle, requests, HTML); a second page opened in Chromium while live. Other work on the
server runs inside every window (the reader, alert passes): the figures are an upper bound of a
view's own cost.
Prints one line per step and stops every process it started.
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import redis as redis_py
from playwright.sync_api import sync_playwright

MANY_DIR = Path(__file__).resolve().parent
REPO_DIR = MANY_DIR.parent.parent
sys.path[:0] = [str(MANY_DIR.parent), str(MANY_DIR)]

from page_load import CHROMIUM_ARGS, CHROMIUM_PATH, measure, open_page  # noqa: E402
from servers import free_port  # noqa: E402 - bench/ is on sys.path only from here on


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--queues", type=int, default=2000, help="queues to seed (default 2000)")
    ap.add_argument("--redis", help="an already seeded Redis: nothing is started or seeded")
    ap.add_argument("--quiet", type=float, default=35.0, help="seconds with nobody watching")
    ap.add_argument(
        "--settle",
        type=float,
        default=3.0,
        help="seconds after the first open before the live steps (a reader that starts at "
        "50,000 queues reads their counts over a minute)",
    )
    ap.add_argument("--repeats", type=int, default=1, help="times each live view is measured")
    args = ap.parse_args()
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str], **kw: object) -> None:
        started.append(subprocess.Popen(argv, start_new_session=True, **kw))  # type: ignore[call-overload]

    try:
        url = args.redis
        if url is None:
            port = free_port(6900, 6950)
            start(
                ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL,
            )
            url = f"redis://127.0.0.1:{port}/0"
            time.sleep(0.5)
            subprocess.run(
                [
                    "node",
                    str(REPO_DIR / "bench/node/seed_many.mjs"),
                    "--redis",
                    url,
                    "--prefix",
                    "bull",
                    "--queues",
                    str(args.queues),
                    "--reset",
                    "--procs",
                    "2",
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        client = redis_py.Redis.from_url(url)
        http_port = free_port(8900, 8950)
        env = dict(os.environ, REDIS_URL=url, HOST="127.0.0.1", PORT=str(http_port))
        start(
            ["./run", "serve"],
            cwd=REPO_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{http_port}"

        def get(path: str) -> int:
            conn = http.client.HTTPConnection("127.0.0.1", http_port, timeout=300)
            conn.request("GET", path)
            answer = conn.getresponse()
            answer.read()
            return answer.status

        for _ in range(600):
            try:
                if get("/queues/api/queues/") == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        time.sleep(args.quiet)

        def calls() -> dict[str, int]:
            stats = client.info("commandstats")
            return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}

        def step(label: str, run: Callable[[], object]) -> None:
            before = calls()
            t0 = time.perf_counter()
            run()
            ms = (time.perf_counter() - t0) * 1000
            after = calls()
            grown = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
            grown["info"] = grown.get("info", 1) - 1
            total = sum(grown.values())
            top = ", ".join(
                f"{k} {v}" for k, v in sorted(grown.items(), key=lambda kv: -kv[1])[:8] if v
            )
            print(
                f"{label}: {total:,} commands ({total / args.queues:.2f} a queue), "
                f"{ms:,.0f} ms: {top}",
                flush=True,
            )

        step("GET /queues/, nobody watching", lambda: get("/queues/"))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM_PATH, args=CHROMIUM_ARGS)
            page = browser.new_page()
            step(
                "first open in Chromium (+4 s)",
                lambda: (page.goto(f"{base}/queues/"), page.wait_for_timeout(4000)),
            )
            page.wait_for_timeout(args.settle * 1000)
            for _ in range(args.repeats):
                step("GET /queues/ while live", lambda: get("/queues/"))
                step("GET api/queues/ while live", lambda: get("/queues/api/queues/"))
            for _ in range(args.repeats):
                opened = open_page(browser, f"{base}/queues/", timeout_s=60, quiet_s=1.0)
                load = measure(opened)
                opened.close()
                print(
                    f"page opened in Chromium while live: network idle {load.network_idle_ms} ms, "
                    f"{load.requests} requests, HTML {load.html_body_bytes} bytes",
                    flush=True,
                )
            second = browser.new_page()
            step(
                "second open in Chromium while live (+2 s)",
                lambda: (second.goto(f"{base}/queues/"), second.wait_for_timeout(2000)),
            )
            browser.close()
    finally:
        for process in started:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
