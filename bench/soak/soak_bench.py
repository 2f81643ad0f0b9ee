"""Soak: Bullpen serving viewers and HTTP clients for a long time under a steady BullMQ load,
through a restart of the queues' Redis and a restart of the channel layer's Redis.

    ./.venv/bin/python bench/soak/soak_bench.py                 # 30 minutes
    ./.venv/bin/python bench/soak/soak_bench.py --minutes 6     # a shorter run, same shape

What runs, all on this machine (loopback only): two redis-servers (the queues', the channel
layer's), Bullpen (`./run serve`, one daphne process, channels-redis layer), the Node load
generator (bench/node/live_load.mjs), `--viewers` websockets (half on the overview, half on the
bench-00 queue page) and `--http` keep-alive HTTP clients cycling over the JSON API and the pages.
At `--redis-restart-at` of the run the queues' Redis is stopped for `--outage` seconds and
started again on the same port (empty, as after a crash without persistence); at
`--layer-restart-at` the channel layer's Redis likewise. Every `--sample` seconds: HTTP requests,
errors and p99, live messages per viewer (least and median), status messages saying Redis is
down, and the server's RSS. The report goes to stdout and bench/out/soak-<time>.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.servers.redis_server import RedisServer, free_port  # noqa: E402

NODE_DIR = ROOT / "bench" / "node"
OUT_DIR = ROOT / "bench" / "out"
QUEUE_PAGE = "bench-00"
HTTP_PATHS = (
    "/queues/api/queues/",
    f"/queues/api/queues/{QUEUE_PAGE}/jobs/?state=completed&per_page=50",
    "/queues/",
    f"/queues/q/{QUEUE_PAGE}/?state=completed",
)


def log(text: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", flush=True)


@dataclass
class Interval:
    """What one sample interval saw."""

    started: float
    http_ok: int = 0
    http_errors: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    down_messages: int = 0
    event: str = ""


@dataclass
class ViewerCounts:
    messages: int = 0
    closed: bool = False


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.queues_redis = RedisServer()
        self.layer_redis = RedisServer()
        self.port = free_port()
        self.server: subprocess.Popen[bytes] | None = None
        self.load: subprocess.Popen[bytes] | None = None
        self.viewers: list[ViewerCounts] = []
        self.intervals: list[Interval] = [Interval(time.monotonic())]
        self.samples: list[dict[str, Any]] = []
        self.stop = asyncio.Event()

    @property
    def now(self) -> Interval:
        return self.intervals[-1]

    # ---- processes ------------------------------------------------------------------------

    def start_processes(self, tmp: Path) -> None:
        self.queues_redis.start()
        self.layer_redis.start()
        redis_url = self.queues_redis.url
        node = ["node", str(NODE_DIR / "live_load.mjs"), "--redis", redis_url]
        subprocess.run(
            [*node, "--setup", "20", "--duration", "0"],
            cwd=NODE_DIR,
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=120,
        )
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "CHANNEL_LAYER_URL": self.layer_redis.url,
            "PORT": str(self.port),
            "BULLPEN_SILENCED_CHECKS": "bullpen.W010,bullpen.W012",
            # Every viewer is an anonymous page from this one address.
            "BULLPEN_MAX_SOCKETS_PER_CLIENT": "100000",
        }
        with (tmp / "bullpen.log").open("wb") as out:
            self.server = subprocess.Popen(
                ["./run", "serve"],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while not _listening(self.port):
            if time.monotonic() > deadline or self.server.poll() is not None:
                raise SystemExit("Bullpen did not start: " + (tmp / "bullpen.log").read_text())
            time.sleep(0.2)
        seconds = int(self.args.minutes * 60) + 30
        with (tmp / "load.log").open("wb") as out:
            self.load = subprocess.Popen(
                [*node, "--rate", str(self.args.rate), "--duration", str(seconds)],
                cwd=NODE_DIR,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop_processes(self) -> None:
        for proc in (self.load, self.server):
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
        self.queues_redis.stop()
        self.layer_redis.stop()

    # ---- clients --------------------------------------------------------------------------

    async def viewer(self, index: int) -> None:
        counts = ViewerCounts()
        self.viewers.append(counts)
        url = f"ws://127.0.0.1:{self.port}/ws/bullpen/"
        origin = f"http://127.0.0.1:{self.port}"
        watch = (
            {"watch": "overview"}
            if index % 2
            else {
                "watch": "queue",
                "queue": QUEUE_PAGE,
                "state": "waiting",
                "page": 1,
                "per_page": 50,
                "order": "desc",
            }
        )
        async with websockets.connect(url, origin=origin, max_size=2**24) as socket:  # type: ignore[arg-type]
            await socket.send(json.dumps(watch))
            try:
                while not self.stop.is_set():
                    raw = await socket.recv()
                    counts.messages += 1
                    message = json.loads(raw)
                    if message.get("type") == "status" and message.get("redis") == "down":
                        self.now.down_messages += 1
            except websockets.ConnectionClosed:
                counts.closed = True

    async def http_client(self, index: int) -> None:
        """One keep-alive HTTP/1.1 connection, as a browser's; reopened after an error."""
        turn = index
        while not self.stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                self.now.http_errors += 1
                await asyncio.sleep(1)
                continue
            try:
                while not self.stop.is_set():
                    path = HTTP_PATHS[turn % len(HTTP_PATHS)]
                    turn += 1
                    started = time.monotonic()
                    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                    status = await _read_response(reader)
                    interval = self.now
                    if status == 200:
                        interval.http_ok += 1
                        interval.latencies_ms.append((time.monotonic() - started) * 1000)
                    else:
                        interval.http_errors += 1
                    await asyncio.sleep(self.args.http_pause)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.now.http_errors += 1
                await asyncio.sleep(0.5)
            finally:
                writer.close()

    # ---- the run --------------------------------------------------------------------------

    async def run(self) -> None:
        args = self.args
        tasks = [asyncio.create_task(self.viewer(i)) for i in range(args.viewers)]
        tasks += [asyncio.create_task(self.http_client(i)) for i in range(args.http)]
        total = args.minutes * 60
        began = time.monotonic()
        plan = sorted(
            [
                (args.redis_restart_at * total, "queues Redis"),
                (args.layer_restart_at * total, "layer Redis"),
            ]
        )
        next_sample = began + args.sample
        while time.monotonic() - began < total:
            await asyncio.sleep(0.2)
            if plan and time.monotonic() - began >= plan[0][0]:
                _, which = plan.pop(0)
                server = self.queues_redis if which == "queues Redis" else self.layer_redis
                log(f"restarting the {which} ({args.outage:.0f} s down)")
                self.now.event += f"{which} restarted; "
                await asyncio.to_thread(server.stop)
                await asyncio.sleep(args.outage)
                await asyncio.to_thread(server.start)
            if time.monotonic() >= next_sample:
                self.take_sample(time.monotonic() - began)
                next_sample += args.sample
        self.stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def take_sample(self, at: float) -> None:
        interval = self.now
        per_viewer = [v.messages for v in self.viewers]
        for viewer in self.viewers:
            viewer.messages = 0
        lat = sorted(interval.latencies_ms)
        sample = {
            "minute": round(at / 60, 1),
            "http": interval.http_ok,
            "http_errors": interval.http_errors,
            "http_p99_ms": round(lat[int(len(lat) * 0.99) - 1], 1) if lat else None,
            "msgs_min": min(per_viewer, default=0),
            "msgs_median": statistics.median(per_viewer) if per_viewer else 0,
            "closed_sockets": sum(v.closed for v in self.viewers),
            "down_messages": interval.down_messages,
            "rss_mib": _rss_mib(self.server.pid) if self.server else None,
            "event": interval.event.strip("; "),
        }
        self.samples.append(sample)
        log(json.dumps(sample))
        self.intervals.append(Interval(time.monotonic()))


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next(
        (
            int(line.split(":", 1)[1])
            for line in lines
            if line.lower().startswith("content-length:")
        ),
        None,
    )
    if length is None:
        raise ValueError("no Content-Length: cannot keep the connection")
    await reader.readexactly(length)
    return status


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _rss_mib(pid: int) -> float | None:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


def report(args: argparse.Namespace, samples: list[dict[str, Any]], log_path: Path) -> str:
    server_log = log_path.read_text(errors="replace")
    tracebacks = server_log.count("Traceback")
    lines = [
        f"## Soak — {dt.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}",
        "",
        f"- {args.minutes:g} minutes; {args.viewers} viewers (half overview, half the {QUEUE_PAGE} "
        f"queue page), {args.http} keep-alive HTTP clients ({len(HTTP_PATHS)} routes in turn, "
        f"{args.http_pause * 1000:.0f} ms apart), Node load {args.rate} jobs/s",
        f"- the queues' Redis restarted at {args.redis_restart_at:.0%} of the run, the channel "
        f"layer's at {args.layer_restart_at:.0%}, each {args.outage:g} s down",
        f"- server log: {tracebacks} tracebacks, "
        f"{server_log.count('refused a message')} 'channel layer refused' lines",
        "",
        "| minute | HTTP ok | HTTP errors | HTTP p99 ms | live msgs per viewer (least / median) "
        "| sockets closed | 'Redis down' msgs | RSS MiB | event |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in samples:
        lines.append(
            f"| {s['minute']} | {s['http']:,} | {s['http_errors']} | {s['http_p99_ms']} | "
            f"{s['msgs_min']} / {s['msgs_median']:g} | {s['closed_sockets']} | "
            f"{s['down_messages']} | {s['rss_mib']} | {s['event']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--http", type=int, default=20)
    parser.add_argument("--http-pause", type=float, default=0.1)
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--redis-restart-at", type=float, default=0.4)
    parser.add_argument("--layer-restart-at", type=float, default=0.7)
    parser.add_argument("--outage", type=float, default=5)
    parser.add_argument("--sample", type=float, default=30)
    args = parser.parse_args()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    tmp = OUT_DIR / f"soak-{stamp}"
    tmp.mkdir(parents=True, exist_ok=True)
    soak = Soak(args)
    try:
        log(f"starting Redis x2, Bullpen on port {soak.port}, the load ({args.rate} jobs/s)")
        soak.start_processes(tmp)
        asyncio.run(soak.run())
    finally:
        soak.stop_processes()
    text = report(args, soak.samples, tmp / "bullpen.log")
    (OUT_DIR / f"soak-{stamp}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
