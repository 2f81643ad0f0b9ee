#!/usr/bin/env python3
"""The queue page with history recorded and with ``HISTORY_RECORDING`` off, side by side.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/history/page_bench.py              # about 3 minutes
    ./.venv/bin/python bench/history/page_bench.py --rounds 40

Steps: start a throw-away ``redis-server`` on a free port; fill 90 days of history of one
queue (``m0000``: every minute of 24 h, hour of 30 d and day of 90 d, 5 job names, 120 jobs a
minute a name, history_bench.py's ``fill``) and give it 200 waiting jobs through the ``bullmq``
package; start two Bullpen servers (``daphne``, the standalone site) on that Redis, one with
``HISTORY_RECORDING`` on and one with it off, each with its own ``LIVE_KEY_PREFIX`` (so each
holds its own live reader's lease: the first reads the filled history, the second has none);
start a producer process writing what BullMQ writes when workers finish 200 jobs/s over 100
other queues (producer.py's ``produce``), which the recording server's reader records
while the pages are read. Then, ``--rounds`` times, the two servers one after the other (which
goes first alternates), each URL below once, a new connection each, timed from the request to
the last byte of the answer:

* ``page``: ``q/m0000/``, and ``page + fragments``: it and the fragments it loads at once
  (alerts, throughput chart, schedulers, workers), one after the other;
* ``history section``: what opening the page's History fold loads (``history/section/``: the
  charts and the names' table, 24 hours), and the same over 90 days.

Printed: per server and URL, the median and 95th percentile (ms). The machine is shared: read
the two servers' figures against each other, not alone.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing import Process
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from bench.history import history_bench  # noqa: E402
from bench.history.producer import NAMES, produce  # noqa: E402
from bench.support import free_port, start_redis  # noqa: E402

QUEUE = "m0000"
PAGE = f"/queues/q/{QUEUE}/"
FRAGMENTS = (
    f"{PAGE}alerts/",
    f"{PAGE}throughput/?window=hour",
    f"{PAGE}schedulers/",
    f"{PAGE}workers/",
)
SECTIONS = {
    "history section 24h": f"{PAGE}history/section/",
    "history section 90d": f"{PAGE}history/section/?range=90d",
}
SETTINGS = """from bullpen_site.settings import *  # noqa: F403

BULLPEN = {{**BULLPEN, "HISTORY_RECORDING": {on}, "LIVE_KEY_PREFIX": "{prefix}"}}  # noqa: F405
STATIC_ROOT = "{static}"
"""


def get(port: int, path: str) -> float:
    """One GET, ms from the request to the answer's last byte; it must answer 200."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
    finally:
        connection.close()
    if answer.status != 200:
        sys.exit(f"GET {path} answered {answer.status}")
    return (time.perf_counter() - started) * 1000


def start_server(tmp: Path, url: str, on: bool) -> tuple[subprocess.Popen[bytes], int]:
    name = f"page_bench_{'on' if on else 'off'}"
    prefix, static = name.replace("_", "-"), tmp / "static"
    (tmp / f"{name}.py").write_text(SETTINGS.format(on=on, prefix=prefix, static=static))
    env = {
        **os.environ,
        "PYTHONPATH": f"{tmp}:{ROOT}",
        "DJANGO_SETTINGS_MODULE": name,
        "REDIS_URL": url,
        "BULLPEN_DB": str(tmp / f"{name}.sqlite3"),
    }
    python = str(ROOT / ".venv" / "bin" / "python")
    for step in (["collectstatic"], ["migrate"]):
        command = [python, "manage.py", *step, "--no-input", "-v", "0"]
        subprocess.run(command, cwd=ROOT, env=env, check=True, stderr=subprocess.DEVNULL)
    port = free_port()
    command = [str(ROOT / ".venv" / "bin" / "daphne"), "-b", "127.0.0.1", "-p", str(port)]
    proc = subprocess.Popen(
        [*command, "bullpen_site.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp / f"{name}.log", "wb"),
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            get(port, "/queues/api/queues/")
            return proc, port
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the {name} server did not start: see {tmp / name}.log")
            time.sleep(0.2)


async def add_jobs(url: str) -> None:
    from bullmq import Queue

    queue = Queue(QUEUE, {"connection": url})
    try:
        await queue.addBulk([{"name": NAMES[i % 5], "data": {"i": i}} for i in range(200)])
    finally:
        await queue.close()


def setup_django(url: str) -> None:
    """This process writes history under the recording server's own prefix alone."""
    from django.conf import settings

    settings.configure(
        SECRET_KEY="bench",  # noqa: S106 - a throw-away process
        INSTALLED_APPS=["queues"],
        USE_TZ=True,
        BULLPEN={"REDIS_URL": url, "DISCOVERY_INTERVAL": 0, "LIVE_KEY_PREFIX": "page-bench-on"},
    )
    import django

    django.setup()


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(ports: dict[str, int], rounds: int) -> dict[str, dict[str, list[float]]]:
    found: dict[str, dict[str, list[float]]] = {server: {} for server in ports}
    servers = list(ports)
    for index in range(-3, rounds):  # three rounds first, not counted: each reader starts
        for server in servers if index % 2 == 0 else servers[::-1]:
            port, times = ports[server], found[server]
            page = get(port, PAGE)
            loads = page + sum(get(port, path) for path in FRAGMENTS)
            sections = {label: get(port, path) for label, path in SECTIONS.items()}
            if index < 0:
                continue
            times.setdefault("page", []).append(page)
            times.setdefault("page + fragments", []).append(loads)
            for label, took in sections.items():
                times.setdefault(label, []).append(took)
    return found


def main(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="history-page-bench-"))
    redis_proc, url = start_redis(tmp)
    servers: list[subprocess.Popen[bytes]] = []
    producer: Process | None = None
    try:
        setup_django(url)
        asyncio.run(history_bench.fill(url, 1, 120))
        asyncio.run(add_jobs(url))
        ports = {}
        for label, on in (("recording on", True), ("recording off", False)):
            proc, ports[label] = start_server(tmp, url, on)
            servers.append(proc)
        producer = Process(target=produce, args=(url, 200, 3600), daemon=True)
        producer.start()
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        load = os.getloadavg()[0]
        found = measure(ports, args.rounds)
        cores = os.cpu_count()
        print(f"# Queue page, history recorded or not ({when}, {cores} cores, load {load:.1f})\n")
        print(f"{args.rounds} rounds, the servers interleaved; ms from request to last byte.\n")
        print("| request | recording on: median | p95 | recording off: median | p95 |")
        print("| --- | ---: | ---: | ---: | ---: |")
        on, off = found["recording on"], found["recording off"]
        for label in on:
            cells = [
                f"{statistics.median(on[label]):.1f} | {quantile(on[label], 0.95):.1f}",
                f"{statistics.median(off[label]):.1f} | {quantile(off[label], 0.95):.1f}",
            ]
            print(f"| {label} | {' | '.join(cells)} |")
    finally:
        if producer is not None:
            producer.terminate()
        for proc in servers:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        redis_proc.terminate()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=25)
    main(parser.parse_args())
