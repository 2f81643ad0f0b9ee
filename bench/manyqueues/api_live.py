#!/usr/bin/env python3
"""``api/queues/`` from a daphne process whose own live reader follows every queue.

Run from the repository root with the project's virtualenv, against a Redis seeded by
``bench/node/seed_many.mjs``::

    ./.venv/bin/python bench/manyqueues/api_live.py --redis redis://127.0.0.1:6961/0
    ./.venv/bin/python bench/manyqueues/api_live.py --redis ... --tree /tmp/other-checkout

Starts ``./run serve`` in ``--tree`` (default: this checkout), opens one websocket that
watches the overview (the reader then reads every queue's counts), and waits until the
reader vouches for them: two GETs in a row, 15 s apart, cost Redis fewer than 1,000 commands
(``INFO commandstats``; a view that reads every queue itself costs hundreds of thousands),
each of those GETs printed (the first that costs few is the first view after the reader vouched).
Then counts Redis's commands over ``--idle`` seconds (the
reader's cost while nothing happens), and times ``--views`` GETs each of ``api/queues/``,
``?sort=-failed`` and ``?problems=1``, with the commands each cost (a view that reads every
queue itself, because the reader did not vouch, costs tens of thousands). Prints one line per
step and stops the server it started.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import redis as redis_py
from websockets.sync.client import connect

MANY_DIR = Path(__file__).resolve().parent
REPO_DIR = MANY_DIR.parent.parent
sys.path[:0] = [str(MANY_DIR.parent)]

from servers import free_port  # noqa: E402 - bench/ is on sys.path only from here on


def calls(client: redis_py.Redis) -> int:
    stats = client.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--redis", required=True, help="a Redis seeded by seed_many.mjs")
    ap.add_argument("--tree", default=str(REPO_DIR), help="the checkout to serve from")
    ap.add_argument("--views", type=int, default=3, help="GETs of each kind (default 3)")
    ap.add_argument("--idle", type=float, default=60.0, help="seconds counted while idle")
    ap.add_argument("--wait", type=float, default=900.0, help="seconds to wait for the reader")
    ap.add_argument(
        "--page",
        action="store_true",
        help="first the overview's HTML page (its rows' alerts read), then the API's views",
    )
    args = ap.parse_args()
    client = redis_py.Redis.from_url(args.redis)
    port = free_port(8960, 8999)
    env = dict(os.environ, REDIS_URL=args.redis, HOST="127.0.0.1", PORT=str(port))
    server = subprocess.Popen(
        ["./run", "serve"],
        cwd=args.tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    stop = threading.Event()
    try:

        def get(path: str) -> tuple[int, float, int]:
            before = calls(client)
            began = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            conn.request("GET", path)
            answer = conn.getresponse()
            answer.read()
            wall = time.perf_counter() - began
            return answer.status, wall, calls(client) - before

        for _ in range(600):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/favicon.ico")
                conn.getresponse().read()
                break
            except OSError:
                time.sleep(0.5)
        socket = connect(
            f"ws://127.0.0.1:{port}/ws/bullpen/",
            origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
            max_size=None,
            legacy=True,
        )
        socket.send(json.dumps({"watch": "overview"}))

        def drain() -> None:  # the page's messages, read and dropped as a browser would
            while not stop.is_set():
                try:
                    socket.recv(timeout=1)
                except TimeoutError:
                    continue
                except Exception:
                    return

        threading.Thread(target=drain, daemon=True).start()
        began = time.monotonic()
        vouched = 0
        while time.monotonic() - began < args.wait and vouched < 2:
            time.sleep(15)
            # Each printed: the first that costs few commands is the first view after the
            # reader vouched.
            status, wall, cost = get("/queues/api/queues/?per_page=25")
            vouched = vouched + 1 if cost < 1000 else 0
            print(
                f"waiting, ?per_page=25: {status}, {wall * 1000:,.0f} ms, {cost:,} commands "
                f"(load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
        print(
            f"reader vouched after {time.monotonic() - began:.0f} s "
            f"(load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        before = calls(client)
        time.sleep(args.idle)
        idle = (calls(client) - before) * 60 / args.idle
        print(f"Redis commands while idle: {idle:,.0f} a minute", flush=True)
        paths = ("/queues/api/queues/", "/queues/api/queues/?sort=-failed")
        if args.page:
            paths = ("/queues/", *paths)
        for path in paths:
            for _ in range(args.views):
                status, wall, cost = get(path)
                print(
                    f"{path}: {status}, {wall * 1000:,.0f} ms, {cost:,} commands "
                    f"(load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
                time.sleep(1)
        for _ in range(args.views):
            status, wall, cost = get("/queues/api/queues/?problems=1")
            print(
                f"/queues/api/queues/?problems=1: {status}, {wall * 1000:,.0f} ms, "
                f"{cost:,} commands (load {os.getloadavg()[0]:.1f})",
                flush=True,
            )
            time.sleep(1)
        stop.set()
        socket.close()
    finally:
        stop.set()
        try:
            os.killpg(server.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
