#!/usr/bin/env python3
"""Live-update benchmark: Bullpen's websockets vs Bull Board's polling, under steady BullMQ load.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/live/live_bench.py --quick            # about 5 minutes
    ./.venv/bin/python bench/live/live_bench.py                    # about 15 minutes
    ./.venv/bin/python bench/live/live_bench.py --soak-minutes 10  # + a 10-minute soak

Steps: start a throw-away ``redis-server``; create ``bench-00`` .. ``bench-19``; start Bullpen
(``./run serve``) and Bull Board (``bench/node/bullboard.mjs``) on it; start the Node load
generator (``bench/node/live_load.mjs``: ~200 jobs/s, each through four ``updateProgress``
calls, most on ``bench-00``). Then, one window after the other:

* baseline (twice): the load alone, Bullpen idle (no page ever opened), Bull Board not polled;
* Bull Board with 1 and 10 tabs, each polling ``GET /api/queues?page=1&jobsPerPage=10`` every 5 s;
* Bullpen with N websocket viewers for each N (1, 10, 100, 500), half on the overview, half on
  the ``bench-00`` queue page;
* Bullpen with 0 viewers after that (its follower keeps running once started);
* optionally a soak: 100 viewers for ``--soak-minutes``, RSS sampled every 30 s.

For every window: Redis commands per minute (``INFO commandstats``) and the increase over the
baseline (per job the load generator completed, see bench/README.md), Redis and server CPU,
the server's RSS, event-to-client latency percentiles and messages per viewer per second.
Prints a Markdown report (also written to ``bench/out/``) and stops every process it started.
Every connection goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as _dt
import json
import math
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LIVE_DIR = Path(__file__).resolve().parent
THIS_SCRIPT = str(Path(__file__).resolve())
BENCH_DIR = LIVE_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

try:
    import orjson
    import redis as redis_py
    from websockets.asyncio.client import ClientConnection, connect
    from websockets.exceptions import ConnectionClosed
except ImportError as exc:  # pragma: no cover - the project venv has them
    sys.exit(f"live_bench.py needs {exc.name!r}: run it with ./.venv/bin/python")

import reader_check  # noqa: E402 - bench/live/ is the script's own folder
from machine import (  # noqa: E402 - bench/ is on sys.path only from here on
    bullpen_version,
    cmd_output,
    cpu_model,
    node_pkg_version,
    python_pkg_version,
)
from servers import Popen, Processes, free_port, http_get, parse_range, wait_http  # noqa: E402

REPO_DIR = BENCH_DIR.parent
NODE_DIR = BENCH_DIR / "node"
OUT_DIR = BENCH_DIR / "out"

N_QUEUES = 20
QUEUE_PAGE = "bench-00"
WS_PATH = "/ws/bullpen/"
BULLPEN_READY = "/queues/api/queues/"
BULLBOARD_POLL = "/api/queues?page=1&jobsPerPage=10"
BULLBOARD_INTERVAL = 5.0  # seconds between two polls of one Bull Board tab (its UI default)
DEFAULT_BULLPEN_CMD = "./run serve"
DEFAULT_MIX = "bench-00:70,bench-01:10,bench-02:10,bench-03:10"
HIST_LIMIT_MS = 60_000
# One client process handles this many viewers (see ViewerSet).
VIEWERS_PER_PROCESS = 125
# A child's report is one JSON line: histograms and the probe viewer's completed job ids.
CHILD_REPLY_LIMIT = 2**26
# Targets (from the product issue).
SCALE_BOUND = 1.1  # cmds/min with 100 viewers at most 1.1 times those with 1 viewer
LATENCY_P99_MS = 250.0
SOAK_GROWTH = 0.05  # RSS "flat": end ≤ start + 5 % (and at most 10 MiB)
SOAK_GROWTH_MIB = 10.0
CLK_TCK = os.sysconf("SC_CLK_TCK")
TIMES = "\N{MULTIPLICATION SIGN}"
MINUS = "\N{MINUS SIGN}"


def log(msg: str) -> None:
    print(f"[live {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def now_ms() -> float:
    return time.time() * 1000.0


# --------------------------------------------------------------------------
# processes: RSS and CPU from /proc


def group_pids(leader: int) -> list[int]:
    """Every live process in the process group ``leader`` leads (the servers run in their own)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == leader:  # pgrp
            pids.append(int(entry))
    return pids


def find_server_pid(proc: Popen, needle: str, timeout: float = 10.0) -> int:
    """The pid of the process in ``proc``'s group whose command line contains ``needle``."""
    deadline = time.monotonic() + timeout
    while True:
        for pid in group_pids(proc.pid):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if needle in cmdline:
                return pid
        if time.monotonic() > deadline:
            raise SystemExit(f"no process with {needle!r} in its command line under {proc.pid}")
        time.sleep(0.2)


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime
    except (OSError, IndexError, ValueError):
        return float("nan")


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])
    return total - idle, total


def raise_fd_limit(need: int) -> str:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        new = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = new
    if soft != resource.RLIM_INFINITY and soft < need:
        raise SystemExit(f"open-file limit {soft} is below the {need} the run needs (ulimit -n)")
    return str(soft)


# --------------------------------------------------------------------------
# Redis counters


@dataclass
class RedisSample:
    calls: dict[str, int]
    cpu: float
    t: float


def redis_sample(r: redis_py.Redis) -> RedisSample:
    info = r.execute_command("INFO", "commandstats", "cpu")  # type: ignore[no-untyped-call]
    calls = {}
    for key, val in info.items():
        if key.startswith("cmdstat_") and isinstance(val, dict):
            calls[key[len("cmdstat_") :]] = int(val["calls"])
    cpu = float(info.get("used_cpu_sys", 0)) + float(info.get("used_cpu_user", 0))
    return RedisSample(calls, cpu, time.monotonic())


def calls_between(a: RedisSample, b: RedisSample) -> dict[str, int]:
    diff = {k: v - a.calls.get(k, 0) for k, v in b.calls.items() if v - a.calls.get(k, 0)}
    # The first INFO is counted in the second one's figures: not the servers' doing.
    if diff.get("info"):
        diff["info"] -= 1
        if not diff["info"]:
            del diff["info"]
    return diff


# --------------------------------------------------------------------------
# the load generator's counters (JSON lines in its log)


@dataclass
class LoadSample:
    t: float  # epoch ms of the line
    added: int
    completed: int
    progress: int
    behind: int
    queues: dict[str, list[int]]
    done: bool


def load_sample(path: Path) -> LoadSample | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    # Only whole lines; the last one may still be being written.
    for line in reversed(data[: data.rfind(b"\n") + 1].splitlines()):
        if line.startswith(b"{"):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            return LoadSample(
                t=float(d.get("t", 0)),
                added=int(d.get("added", 0)),
                completed=int(d.get("completed", 0)),
                progress=int(d.get("progress", 0)),
                behind=int(d.get("behind", 0)),
                queues=d.get("q", {}) or {},
                done=bool(d.get("done")),
            )
    return None


# --------------------------------------------------------------------------
# latency histograms (1 ms bins)


class Hist:
    def __init__(self) -> None:
        self.bins = [0] * (HIST_LIMIT_MS + 1)
        self.n = 0
        self.max = 0.0
        self.sum = 0.0

    def add(self, ms: float) -> None:
        if ms < 0:
            ms = 0.0
        i = int(ms)
        self.bins[i if i < HIST_LIMIT_MS else HIST_LIMIT_MS] += 1
        self.n += 1
        self.sum += ms
        if ms > self.max:
            self.max = ms

    def merge(self, other: Hist) -> None:
        for i, c in enumerate(other.bins):
            if c:
                self.bins[i] += c
        self.n += other.n
        self.sum += other.sum
        self.max = max(self.max, other.max)

    def pct(self, p: float) -> float | None:
        """The upper edge of the bin holding the p-th percentile (ms)."""
        if not self.n:
            return None
        want = max(1, math.ceil(p / 100.0 * self.n))
        cum = 0
        for i, c in enumerate(self.bins):
            cum += c
            if cum >= want:
                return float(i + 1)
        return float(HIST_LIMIT_MS)

    def summary(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "p50": self.pct(50),
            "p90": self.pct(90),
            "p99": self.pct(99),
            "p999": self.pct(99.9),
            "max": round(self.max, 1) if self.n else None,
            "mean": round(self.sum / self.n, 1) if self.n else None,
        }


# --------------------------------------------------------------------------
# Bullpen viewers


@dataclass
class Recorder:
    """What the viewers saw during the current window."""

    active: bool = False
    hists: dict[str, Hist] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    status_down: int = 0
    closed: int = 0
    started_ms: float = 0.0
    # Worst queue-page latency (progress or rows) in each second of the window.
    worst_by_second: dict[int, float] = field(default_factory=dict)

    def start(self) -> None:
        self.hists = {
            k: Hist() for k in ("progress", "rows", "overview", "overview-sent", "queue-counts")
        }
        self.started_ms = now_ms()
        self.worst_by_second = {}
        self.errors = []
        self.status_down = 0
        self.closed = 0
        self.active = True


class Viewer:
    def __init__(self, idx: int, kind: str, rec: Recorder, track_completed: bool) -> None:
        self.idx = idx
        self.kind = kind  # "overview" | "queue"
        self.rec = rec
        self.ws: ClientConnection | None = None
        self.task: asyncio.Task[None] | None = None
        self.closing = False
        self.track_completed = track_completed
        self.reset()

    def reset(self) -> None:
        self.msgs = 0
        self.bytes = 0
        self.types: dict[str, int] = {}
        self.progress_updates = 0
        self.row_entries = 0
        self.completed_ids: set[str] = set()

    def watch_message(self) -> dict[str, Any]:
        if self.kind == "overview":
            # As the overview page says it: the rows it shows (every queue, at 100 a page)
            # and how many queues its list counts. A server that renders the overview's live
            # parts sends it those ("overview" messages), an older one every queue's counts.
            shown = [f"bench-{i:02d}" for i in range(N_QUEUES)]
            return {"watch": "overview", "shown": shown, "listed": N_QUEUES}
        return {"watch": "queue", "queue": QUEUE_PAGE}

    async def open(self, port: int, wait_s: float) -> None:
        self.ws = await connect(
            f"ws://127.0.0.1:{port}{WS_PATH}",
            origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
            proxy=None,
            open_timeout=wait_s,
            close_timeout=5,
            ping_interval=None,  # browsers send no pings; the client still answers the server's
            max_size=2**24,
        )
        first = orjson.loads(await asyncio.wait_for(self.ws.recv(decode=False), wait_s))
        if first.get("type") != "status":
            raise RuntimeError(f"first message was not a status: {first!r:.200}")
        await self.ws.send(orjson.dumps(self.watch_message()).decode())
        self.task = asyncio.create_task(self._read(), name=f"viewer-{self.idx}")

    async def _read(self) -> None:
        ws = self.ws
        assert ws is not None
        rec = self.rec
        try:
            while True:
                raw = await ws.recv(decode=False)
                t = now_ms()
                if not rec.active:
                    continue
                self.msgs += 1
                self.bytes += len(raw)
                frame = orjson.loads(raw)
                batch = frame.get("type") == "batch"
                for msg in frame["messages"] if batch else [frame]:
                    self._take(msg, t)
        except ConnectionClosed as exc:
            if not self.closing:
                rec.closed += 1
                rec.errors.append(f"viewer {self.idx} ({self.kind}) closed by the server: {exc}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a parse error must not end the run silently
            rec.errors.append(f"viewer {self.idx}: {type(exc).__name__}: {exc}")

    def _take(self, msg: dict[str, Any], t: float) -> None:
        rec = self.rec
        kind = str(msg.get("type"))
        self.types[kind] = self.types.get(kind, 0) + 1
        if kind == "progress" or kind == "rows":
            worst = 0.0
            if kind == "progress":
                hist = rec.hists["progress"]
                for u in msg.get("updates", ()):
                    worst = max(worst, t - u["at"])
                    hist.add(t - u["at"])
                    self.progress_updates += 1
            else:
                hist = rec.hists["rows"]
                for row in msg.get("rows", ()):
                    worst = max(worst, t - row["at"])
                    hist.add(t - row["at"])
                    self.row_entries += 1
                    if self.track_completed and row.get("state") == "completed":
                        self.completed_ids.add(str(row.get("id")))
                for row in msg.get("removed", ()):
                    worst = max(worst, t - row["at"])
                    hist.add(t - row["at"])
                    self.row_entries += 1
            sec = int((t - rec.started_ms) / 1000)
            if worst > rec.worst_by_second.get(sec, 0.0):
                rec.worst_by_second[sec] = worst
        elif kind == "counts" or kind == "overview":
            event_at = msg.get("eventAt") or 0
            if event_at > 0:
                key = "overview" if self.kind == "overview" else "queue-counts"
                rec.hists[key].add(t - event_at)
                if self.kind == "overview":
                    # From the server's send to receipt: the fan-out's and this client's share.
                    rec.hists["overview-sent"].add(t - msg["at"])
        elif kind == "status":
            if msg.get("redis") != "ok":
                rec.status_down += 1
        elif kind == "error":
            rec.errors.append(f"viewer {self.idx}: {msg!r:.200}")

    async def close(self) -> None:
        self.closing = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 6)
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


def open_wait(n: int) -> float:
    """Seconds ``n`` viewers may take to open: 500 took 38 s on a saturated 2-core machine."""
    return 30.0 + n / 10


def viewer_kinds(n: int, queue_share: float) -> list[str]:
    n_queue = 0 if queue_share <= 0 else max(1, round(n * queue_share))
    n_queue = min(n, n_queue)
    return ["queue" if i < n_queue else "overview" for i in range(n)]


async def open_viewers(
    ports: list[int],
    kinds: list[str],
    rec: Recorder,
    wait_s: float,
    *,
    first_idx: int = 0,
    parallel: int = 50,
) -> list[Viewer]:
    n = len(kinds)
    viewers = [
        Viewer(first_idx + i, kind, rec, track_completed=(first_idx + i == 0))
        for i, kind in enumerate(kinds)
    ]
    gate = asyncio.Semaphore(parallel)
    failures: list[str] = []

    async def one(v: Viewer) -> None:
        async with gate:
            try:
                # Several server processes: viewers spread over them in turn.
                await v.open(ports[v.idx % len(ports)], wait_s)
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}")

    await asyncio.gather(*(one(v) for v in viewers))
    if failures:
        await close_viewers(viewers)
        raise SystemExit(f"{len(failures)} of {n} websockets failed to open; first: {failures[0]}")
    return viewers


async def close_viewers(viewers: list[Viewer]) -> None:
    gate = asyncio.Semaphore(100)

    async def one(v: Viewer) -> None:
        async with gate:
            await v.close()

    await asyncio.gather(*(one(v) for v in viewers))


@dataclass
class ViewerStats:
    """What one viewer counted in a window (as a child process reports it)."""

    kind: str
    msgs: int
    bytes: int
    types: dict[str, int]
    progress_updates: int
    row_entries: int
    track_completed: bool
    completed_ids: set[str]

    @classmethod
    def of(cls, v: Viewer) -> ViewerStats:
        return cls(
            v.kind,
            v.msgs,
            v.bytes,
            dict(v.types),
            v.progress_updates,
            v.row_entries,
            v.track_completed,
            set(v.completed_ids),
        )


def hist_to_json(h: Hist) -> dict[str, Any]:
    return {
        "bins": {i: c for i, c in enumerate(h.bins) if c},
        "n": h.n,
        "sum": h.sum,
        "max": h.max,
    }


def hist_from_json(d: dict[str, Any]) -> Hist:
    h = Hist()
    for i, c in d["bins"].items():
        h.bins[int(i)] = c
    h.n, h.sum, h.max = d["n"], d["sum"], d["max"]
    return h


class ViewerSet:
    """N websocket viewers of one window.

    Several hundred viewers are spread over child processes: one Python process cannot take
    500 sockets' messages as they arrive, and the time they wait in its event loop would be
    counted as Bullpen's latency (real viewers are separate browsers on separate machines).
    """

    def __init__(self, n: int, kinds: list[str], procs: int) -> None:
        self.n = n
        self.kinds = kinds
        self.procs = procs
        self.local: list[Viewer] = []
        self.children: list[asyncio.subprocess.Process] = []
        self.extensions = ""

    @property
    def viewers_queue(self) -> int:
        return sum(1 for k in self.kinds if k == "queue")

    async def open(self, ctx: Ctx, wait_s: float) -> None:
        if self.procs <= 1:
            self.local = await open_viewers(ctx.bullpen_ports, self.kinds, ctx.rec, wait_s)
            ws = self.local[0].ws if self.local else None
            if ws is not None and ws.response is not None:
                self.extensions = ws.response.headers.get("Sec-WebSocket-Extensions") or "none"
            return
        # Each child gets an even share of both kinds, so no child carries all queue pages.
        shares: list[list[tuple[int, str]]] = [[] for _ in range(self.procs)]
        for i, kind in enumerate(self.kinds):
            shares[i % self.procs].append((i, kind))
        for share in shares:
            if not share:
                continue
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                THIS_SCRIPT,
                "--viewer-child",
                json.dumps({"ports": ctx.bullpen_ports, "viewers": share, "wait_s": wait_s}),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                limit=CHILD_REPLY_LIMIT,
            )
            self.children.append(child)
        replies = await asyncio.gather(*(self._reply(c, wait_s + 30) for c in self.children))
        failed = [r["error"] for r in replies if "error" in r]
        if failed:
            await self.close()
            raise SystemExit(f"viewer processes failed to open their websockets: {failed[0]}")
        self.extensions = replies[0].get("extensions", "")

    @staticmethod
    async def _reply(child: asyncio.subprocess.Process, wait_s: float) -> dict[str, Any]:
        assert child.stdout is not None
        async with asyncio.timeout(wait_s):
            line = await child.stdout.readline()
        if not line:
            return {"error": f"viewer process {child.pid} exited ({await child.wait()})"}
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def _ask(self, command: str) -> list[dict[str, Any]]:
        for child in self.children:
            assert child.stdin is not None
            child.stdin.write(command.encode() + b"\n")
            await child.stdin.drain()
        return list(await asyncio.gather(*(self._reply(c, 60) for c in self.children)))

    @property
    def pids(self) -> list[int]:
        return [c.pid for c in self.children]

    async def start(self, rec: Recorder) -> None:
        if self.children:
            await self._ask("start")
            return
        for v in self.local:
            v.reset()
        rec.start()

    async def stop(self, rec: Recorder) -> list[ViewerStats]:
        """End the window: ``rec`` gets every process's histograms; returns each viewer's."""
        rec.active = False
        if not self.children:
            return [ViewerStats.of(v) for v in self.local]
        rec.start()
        rec.active = False
        stats: list[ViewerStats] = []
        for reply in await self._ask("stop"):
            for name, d in reply["hists"].items():
                rec.hists[name].merge(hist_from_json(d))
            for sec, ms in reply["worst_by_second"].items():
                rec.worst_by_second[int(sec)] = max(rec.worst_by_second.get(int(sec), 0.0), ms)
            rec.errors.extend(reply["errors"])
            rec.status_down += reply["status_down"]
            rec.closed += reply["closed"]
            for v in reply["viewers"]:
                stats.append(ViewerStats(**{**v, "completed_ids": set(v["completed_ids"])}))
        return stats

    async def close(self) -> None:
        if not self.children:
            await close_viewers(self.local)
            return
        with contextlib.suppress(Exception):
            await self._ask("close")
        for child in self.children:
            try:
                await asyncio.wait_for(child.wait(), 15)
            except TimeoutError:
                child.kill()
                await child.wait()
        self.children = []


async def viewer_child(spec: dict[str, Any]) -> None:
    """A child process's viewers: open, then answer start/stop/close on stdin, JSON on stdout."""
    rec = Recorder()
    share = spec["viewers"]
    out = sys.stdout
    viewers: list[Viewer] = []
    try:
        for idx, kind in share:
            viewers.extend(
                await open_viewers(spec["ports"], [kind], rec, spec["wait_s"], first_idx=idx)
            )
    except BaseException as exc:  # SystemExit from open_viewers included
        out.write(json.dumps({"error": str(exc)}) + "\n")
        out.flush()
        await close_viewers(viewers)
        return
    ws = viewers[0].ws
    extensions = ""
    if ws is not None and ws.response is not None:
        extensions = ws.response.headers.get("Sec-WebSocket-Extensions") or "none"
    out.write(json.dumps({"opened": len(viewers), "extensions": extensions}) + "\n")
    out.flush()
    loop = asyncio.get_running_loop()
    while True:
        command = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if command == "start":
            for v in viewers:
                v.reset()
            rec.start()
            reply: dict[str, Any] = {"ok": True}
        elif command == "stop":
            rec.active = False
            reply = {
                "hists": {name: hist_to_json(h) for name, h in rec.hists.items()},
                "worst_by_second": rec.worst_by_second,
                "errors": rec.errors[:20],
                "status_down": rec.status_down,
                "closed": rec.closed,
                "viewers": [
                    {**ViewerStats.of(v).__dict__, "completed_ids": sorted(v.completed_ids)}
                    for v in viewers
                ],
            }
        else:  # "close", or the parent went away
            await close_viewers(viewers)
            out.write(json.dumps({"closed": True}) + "\n")
            out.flush()
            return
        out.write(json.dumps(reply) + "\n")
        out.flush()


# --------------------------------------------------------------------------
# Bull Board tabs


@dataclass
class TabStats:
    requests: int = 0
    bad: int = 0
    times_ms: list[float] = field(default_factory=list)
    bytes: int = 0


async def poll_tabs(port: int, tabs: int, stop: asyncio.Event, stats: TabStats) -> None:
    """``tabs`` Bull Board pages, each polling every BULLBOARD_INTERVAL s, phases spread out."""
    loop = asyncio.get_running_loop()

    async def tab(i: int) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), i * BULLBOARD_INTERVAL / tabs)
        due = loop.time()
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                status, body = await asyncio.to_thread(http_get, port, BULLBOARD_POLL, 30.0)
            except OSError:
                status, body = 0, b""
            stats.requests += 1
            stats.times_ms.append((time.perf_counter() - t0) * 1000)
            stats.bytes += len(body)
            if status != 200:
                stats.bad += 1
            due += BULLBOARD_INTERVAL
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, due - loop.time()))

    await asyncio.gather(*(tab(i) for i in range(tabs)))


def poll_cost(r: redis_py.Redis, port: int, polls: int) -> tuple[float, dict[str, float]]:
    """Redis commands per Bull Board poll, measured on an otherwise idle Redis."""
    http_get(port, BULLBOARD_POLL)  # outside the count: first-request set-up
    idle0 = redis_sample(r)
    time.sleep(1.0)
    idle = sum(calls_between(idle0, redis_sample(r)).values()) - 1  # minus the 2nd INFO
    s0 = redis_sample(r)
    t0 = time.monotonic()
    for _ in range(polls):
        status, _ = http_get(port, BULLBOARD_POLL)
        if status != 200:
            raise SystemExit(f"Bull Board answered {status} to {BULLBOARD_POLL}")
    elapsed = time.monotonic() - t0
    calls = calls_between(s0, redis_sample(r))
    total = sum(calls.values()) - max(0, idle) * elapsed
    by_cmd = {k: v / polls for k, v in sorted(calls.items(), key=lambda kv: -kv[1])}
    return total / polls, by_cmd


def wait_for_retention(r: redis_py.Redis, prefix: str, mix: str, keep: int, limit_s: float) -> None:
    """Wait until every loaded queue keeps ``keep`` completed jobs: from then on each completion
    also trims one (BullMQ's removeOnComplete), so the load's cost per job is steady and the
    baselines measure what the later windows pay."""
    queues = [part.split(":", 1)[0] for part in mix.split(",") if part]
    deadline = time.monotonic() + limit_s
    while True:
        short = {q: int(r.zcard(f"{prefix}:{q}:completed")) for q in queues}  # type: ignore[arg-type]
        short = {q: n for q, n in short.items() if n < keep}
        if not short:
            return
        if time.monotonic() > deadline:
            log(f"⚠ retention not reached in {limit_s:g} s: {short}")
            return
        time.sleep(1.0)


# --------------------------------------------------------------------------
# windows


@dataclass
class Window:
    label: str
    server: str  # "baseline" | "bullpen" | "bullboard"
    clients: int
    seconds: float = 0.0
    calls: dict[str, int] = field(default_factory=dict)
    redis_cpu_pct: float = 0.0
    server_cpu_pct: float | None = None
    client_cpu_pct: float = 0.0
    # CPU use in % of one core: each process of the benchmark, and the rest of the machine.
    cpu: dict[str, float] = field(default_factory=dict)
    rss_start: float | None = None
    rss_end: float | None = None
    load_average: str = ""  # the 1-minute load average at the window's end
    readers: str = ""  # several Bullpen processes: which of them read Redis
    jobs_completed: float = 0.0
    jobs_per_s: float = 0.0
    bench00_completed: float = 0.0
    bench00_progress: float = 0.0
    behind: int = 0
    # Bullpen
    viewers_queue: int = 0
    viewers_overview: int = 0
    connect_s: float = 0.0
    client_procs: int = 1
    latency: dict[str, dict[str, Any]] = field(default_factory=dict)
    msgs_per_s: dict[str, float] = field(default_factory=dict)
    bytes_per_s: dict[str, float] = field(default_factory=dict)
    spread: dict[str, list[int]] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    completed_seen: int | None = None
    slow_seconds: list[tuple[int, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Bull Board
    tab_requests: int = 0
    tab_p50_ms: float | None = None
    tab_bad: int = 0
    rss_samples: list[tuple[float, float]] = field(default_factory=list)
    # filled in after all windows
    delta_per_min: float | None = None
    delta_per_poll: float | None = None  # Bull Board: Δ commands per poll

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    @property
    def per_min(self) -> float:
        return self.total / self.seconds * 60 if self.seconds else 0.0

    @property
    def per_job(self) -> float:
        return self.total / self.jobs_completed if self.jobs_completed else float("nan")


@dataclass
class Ctx:
    args: argparse.Namespace
    r: redis_py.Redis
    load_log: Path
    load_proc: Popen
    bullpen_port: int
    bullpen_pid: int
    bullboard_port: int
    bullboard_pid: int
    load_pid: int
    redis_pid: int
    interest_key: str
    rec: Recorder = field(default_factory=Recorder)
    extensions: str = ""
    # Every Bullpen process (the first is bullpen_port/bullpen_pid) and the channel layer's Redis.
    bullpen_ports: list[int] = field(default_factory=list)
    bullpen_pids: list[int] = field(default_factory=list)
    layer_redis_pid: int | None = None
    redis_url: str = ""

    @property
    def lease_key(self) -> str:
        return self.interest_key.rsplit(":", 1)[0] + ":lease"


def reader_note(
    ctx: Ctx,
    seen: dict[int, Any],
    lease0: tuple[str, str],
    lease1: tuple[str, str],
) -> str:
    """Which Bullpen process read the event streams in a window, and whether the lease moved."""
    parts = []
    for i, pid in enumerate(ctx.bullpen_pids):
        commands = seen.get(pid, {})
        top = ", ".join(f"{k} {v}" for k, v in commands.most_common(4)) if commands else "none"
        holder = " (lease)" if f":{pid}:" in lease1[0] else ""
        parts.append(f"process {i + 1}{holder}: XREAD {commands.get('XREAD', 0)}; {top}")
    moved = "held throughout" if lease0 == lease1 else f"changed: {lease0} → {lease1}"
    return f"commands sampled with MONITOR: {'; '.join(parts)}; lease {moved}"


async def measure(
    ctx: Ctx,
    w: Window,
    seconds: float,
    *,
    server_pid: int | None,
    viewers: ViewerSet | None = None,
    rss_every: float = 0.0,
) -> Window:
    """One measurement window of ``seconds``: counters before and after."""
    if ctx.load_proc.poll() is not None:
        raise SystemExit("the load generator exited early; see its log")
    if viewers is not None:
        await viewers.start(ctx.rec)
    l0 = load_sample(ctx.load_log)
    s0 = redis_sample(ctx.r)
    c0 = time.process_time()
    children = viewers.pids if viewers is not None else []
    k0 = sum(cpu_seconds(pid) for pid in children)
    ours = {
        "Redis": [ctx.redis_pid],
        "Bullpen": ctx.bullpen_pids,
        "Bull Board": [ctx.bullboard_pid],
        "load generator": [ctx.load_pid],
    }
    if len(ctx.bullpen_pids) > 1:
        ours.update({f"Bullpen {i + 1}": [pid] for i, pid in enumerate(ctx.bullpen_pids)})
    if ctx.layer_redis_pid is not None:
        ours["channel layer Redis"] = [ctx.layer_redis_pid]
    # The server's CPU: every Bullpen process when the window is Bullpen's.
    server_pids = ctx.bullpen_pids if server_pid == ctx.bullpen_pid else [server_pid or 0]

    def cpu_of(pids: list[int]) -> float:
        return sum(cpu_seconds(pid) for pid in pids)

    g0 = {name: cpu_of(pids) for name, pids in ours.items()}
    m0 = machine_busy()
    p0 = cpu_of(server_pids) if server_pid else None
    lease0 = reader_check.lease_state(ctx.r, ctx.lease_key)
    sampled: asyncio.Task[dict[int, Any]] | None = None
    if viewers is not None and len(ctx.bullpen_pids) > 1:
        sample_s = min(3.0, seconds / 3)
        sampled = asyncio.create_task(
            asyncio.to_thread(
                reader_check.commands_by_process, ctx.redis_url, ctx.bullpen_pids, sample_s
            )
        )
    if server_pid:
        w.rss_start = rss_mib(server_pid)
        w.rss_samples.append((0.0, w.rss_start))
    t0 = time.monotonic()
    end = t0 + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        step = min(left, rss_every) if rss_every > 0 else left
        await asyncio.sleep(step)
        if rss_every > 0 and server_pid and time.monotonic() < end - 0.5:
            w.rss_samples.append((time.monotonic() - t0, rss_mib(server_pid)))
            log(f"  {w.label}: RSS {w.rss_samples[-1][1]:.1f} MiB at {w.rss_samples[-1][0]:.0f} s")
    s1 = redis_sample(ctx.r)
    elapsed = time.monotonic() - t0
    stats = await viewers.stop(ctx.rec) if viewers is not None else []
    c1 = time.process_time()
    k1 = sum(cpu_seconds(pid) for pid in children)
    g1 = {name: cpu_of(pids) for name, pids in ours.items()}
    m1 = machine_busy()
    l1 = load_sample(ctx.load_log)
    if server_pid:
        w.rss_end = rss_mib(server_pid)
        w.rss_samples.append((elapsed, w.rss_end))
        p1 = cpu_of(server_pids)
        if p0 is not None:
            w.server_cpu_pct = (p1 - p0) / elapsed * 100
    w.seconds = s1.t - s0.t
    w.calls = calls_between(s0, s1)
    w.redis_cpu_pct = (s1.cpu - s0.cpu) / w.seconds * 100
    w.client_cpu_pct = (c1 - c0 + k1 - k0) / elapsed * 100
    w.cpu = {name: (g1[name] - g0[name]) / elapsed * 100 for name in ours}
    w.cpu["viewers/pollers"] = w.client_cpu_pct
    if m1[1] > m0[1]:
        ncpu = os.cpu_count() or 1
        busy = (m1[0] - m0[0]) / (m1[1] - m0[1]) * 100 * ncpu
        w.cpu["machine"] = busy
        counted = sum(w.cpu[k] for k in ours if not k.startswith("Bullpen ")) + w.client_cpu_pct
        w.cpu["other processes"] = max(0.0, busy - counted)
    w.load_average = f"{os.getloadavg()[0]:.2f}"
    lease1 = reader_check.lease_state(ctx.r, ctx.lease_key)
    if sampled is not None:
        w.readers = reader_note(ctx, await sampled, lease0, lease1)
    if l0 and l1 and l1.t > l0.t:
        rate = (l1.completed - l0.completed) / ((l1.t - l0.t) / 1000)
        w.jobs_per_s = rate
        w.jobs_completed = rate * w.seconds
        span = (l1.t - l0.t) / 1000
        q0, q1 = l0.queues.get(QUEUE_PAGE), l1.queues.get(QUEUE_PAGE)
        if q0 and q1:
            w.bench00_completed = (q1[1] - q0[1]) / span * w.seconds
            w.bench00_progress = (q1[2] - q0[2]) / span * w.seconds
        w.behind = l1.behind - l0.behind
        if l1.done:
            w.errors.append("the load generator finished during this window")
    if viewers is not None:
        w.client_procs = max(1, len(children))
        summarize_viewers(ctx, w, stats, elapsed)
    return w


def summarize_viewers(ctx: Ctx, w: Window, viewers: list[ViewerStats], elapsed: float) -> None:
    rec = ctx.rec
    queue_hist = Hist()
    queue_hist.merge(rec.hists["progress"])
    queue_hist.merge(rec.hists["rows"])
    w.latency = {
        "queue": queue_hist.summary(),
        "progress": rec.hists["progress"].summary(),
        "rows": rec.hists["rows"].summary(),
        "overview": rec.hists["overview"].summary(),
        "queue-counts": rec.hists["queue-counts"].summary(),
        "overview-sent": rec.hists["overview-sent"].summary(),
    }
    for kind in ("queue", "overview"):
        group = [v for v in viewers if v.kind == kind]
        if not group:
            continue
        w.msgs_per_s[kind] = sum(v.msgs for v in group) / len(group) / elapsed
        w.bytes_per_s[kind] = sum(v.bytes for v in group) / len(group) / elapsed
        w.spread[f"{kind} msgs"] = [min(v.msgs for v in group), max(v.msgs for v in group)]
        if kind == "queue":
            w.spread["progress updates"] = [
                min(v.progress_updates for v in group),
                max(v.progress_updates for v in group),
            ]
            w.spread["row entries"] = [
                min(v.row_entries for v in group),
                max(v.row_entries for v in group),
            ]
        for v in group:
            for t, c in v.types.items():
                w.types[f"{kind}:{t}"] = w.types.get(f"{kind}:{t}", 0) + c
    # Seconds of the window in which some queue-page update was later than the target.
    w.slow_seconds = sorted(
        (sec, round(ms)) for sec, ms in rec.worst_by_second.items() if ms > LATENCY_P99_MS
    )
    probe = next((v for v in viewers if v.track_completed), None)
    if probe is not None:
        w.completed_seen = len(probe.completed_ids)
    w.errors.extend(rec.errors[:20])
    if rec.closed:
        w.errors.append(f"{rec.closed} websockets closed by the server during the window")
    if rec.status_down:
        w.errors.append(f"{rec.status_down} 'redis down' status messages")
    # Messages missing: every viewer of a kind should see the same stream.
    for key, (lo, hi) in w.spread.items():
        if hi and (hi - lo) > max(2, 0.02 * hi):
            w.errors.append(f"{key} differ between viewers: min {lo}, max {hi}")
    if (
        w.completed_seen is not None
        and w.bench00_completed > 50
        and w.completed_seen < 0.97 * w.bench00_completed
    ):
        w.errors.append(
            f"the first queue-page viewer saw {w.completed_seen} jobs turn completed, "
            f"the load generator completed ~{w.bench00_completed:.0f} on {QUEUE_PAGE}"
        )


async def check_interest(ctx: Ctx, w: Window | None) -> None:
    """After every viewer has gone, no queue should be left in the live interest hash."""
    await asyncio.sleep(3.0)  # the server publishes a change within its housekeeping second
    left: set[str] = set()
    jobs = 0
    for raw in ctx.r.hgetall(ctx.interest_key).values():
        with contextlib.suppress(ValueError, KeyError, TypeError):
            entry = json.loads(raw)
            left.update(entry["queues"])
            jobs += len(entry["jobs"])
    if (left or jobs) and w is not None:
        w.errors.append(
            f"3 s after every viewer closed, the live interest ({ctx.interest_key}) still "
            f"names queues {sorted(left)} and {jobs} jobs"
        )
        log(f"  ! {w.errors[-1]}")


async def run_windows(ctx: Ctx, meta: dict[str, Any]) -> list[Window]:
    a = ctx.args
    windows: list[Window] = []
    win, settle = a.window, a.settle

    for i in range(a.baselines):
        log(f"baseline {i + 1}/{a.baselines}: load generator only, {win:g} s")
        w = Window(f"baseline {i + 1}", "baseline", 0)
        windows.append(await measure(ctx, w, win, server_pid=ctx.bullpen_pid))
        log(f"  {w.per_min:,.0f} cmds/min, {w.jobs_per_s:.0f} jobs/s, {w.per_job:.1f} cmds/job")

    for tabs in a.bullboard_tabs:
        log(f"Bull Board, {tabs} tab(s) polling every {BULLBOARD_INTERVAL:g} s")
        stop = asyncio.Event()
        stats = TabStats()
        poller = asyncio.create_task(poll_tabs(ctx.bullboard_port, tabs, stop, stats))
        await asyncio.sleep(BULLBOARD_INTERVAL)  # every tab has polled once
        before = stats.requests, len(stats.times_ms), stats.bad
        w = Window(f"Bull Board, {tabs} tab{'s' if tabs != 1 else ''}", "bullboard", tabs)
        await measure(ctx, w, win, server_pid=ctx.bullboard_pid)
        w.tab_requests = stats.requests - before[0]
        times = sorted(stats.times_ms[before[1] :])
        w.tab_p50_ms = times[len(times) // 2] if times else None
        w.tab_bad = stats.bad - before[2]
        if w.tab_bad:
            w.errors.append(f"{w.tab_bad} Bull Board polls failed")
        stop.set()
        await asyncio.wait_for(poller, 60)
        windows.append(w)
        log(f"  {w.per_min:,.0f} cmds/min, {w.tab_requests} polls, p50 {w.tab_p50_ms or 0:.0f} ms")

    meta["bullpen_rss_before_viewers"] = rss_mib(ctx.bullpen_pid)
    for n in a.viewers:
        log(f"Bullpen, {n} viewer(s): opening websockets")
        t0 = time.monotonic()
        viewers = ViewerSet(n, viewer_kinds(n, a.queue_share), client_procs(a, n))
        await viewers.open(ctx, open_wait(n))
        connect_s = time.monotonic() - t0
        if not ctx.extensions and viewers.extensions:
            ctx.extensions = viewers.extensions
            meta["websocket extensions"] = (
                f"offered permessage-deflate (as browsers do); server accepted: {ctx.extensions}"
            )
        log(f"  {n} open in {connect_s:.1f} s; settling {settle:g} s")
        try:
            await asyncio.sleep(settle)
            w = Window(f"Bullpen, {n} viewer{'s' if n != 1 else ''}", "bullpen", n)
            w.connect_s = connect_s
            w.viewers_queue = viewers.viewers_queue
            w.viewers_overview = n - w.viewers_queue
            await measure(ctx, w, win, server_pid=ctx.bullpen_pid, viewers=viewers)
            windows.append(w)
            q, o, sent = w.latency["queue"], w.latency["overview"], w.latency["overview-sent"]
            log(
                f"  {w.per_min:,.0f} cmds/min; queue p50/p99 {q['p50']}/{q['p99']} ms "
                f"({q['n']} samples); overview p50/p99 {o['p50']}/{o['p99']} ms "
                f"(send to receipt {sent['p50']}/{sent['p99']} ms); "
                f"RSS {w.rss_end:.1f} MiB; server CPU {w.server_cpu_pct:.0f} %, "
                f"client CPU {w.client_cpu_pct:.0f} %; load {w.load_average}"
            )
            if w.readers:
                log(f"  {w.readers}")
            for e in w.errors:
                log(f"  ! {e}")
        finally:
            await viewers.close()
        await check_interest(ctx, w)

    if a.viewers and a.idle_window:
        log(f"Bullpen, 0 viewers (its follower keeps running): {win:g} s")
        await asyncio.sleep(min(settle, 5.0))
        w = Window("Bullpen, 0 viewers (after)", "bullpen", 0)
        windows.append(await measure(ctx, w, win, server_pid=ctx.bullpen_pid))
        log(f"  {w.per_min:,.0f} cmds/min")

    if a.soak_minutes > 0:
        n = a.soak_viewers
        log(f"soak: {n} viewers for {a.soak_minutes:g} min, RSS every {a.soak_sample:g} s")
        viewers = ViewerSet(n, viewer_kinds(n, a.queue_share), client_procs(a, n))
        await viewers.open(ctx, open_wait(n))
        try:
            await asyncio.sleep(settle)
            w = Window(f"soak, {n} viewers, {a.soak_minutes:g} min", "bullpen", n)
            w.viewers_queue = viewers.viewers_queue
            w.viewers_overview = n - w.viewers_queue
            await measure(
                ctx,
                w,
                a.soak_minutes * 60,
                server_pid=ctx.bullpen_pid,
                viewers=viewers,
                rss_every=a.soak_sample,
            )
            windows.append(w)
        finally:
            await viewers.close()
        await check_interest(ctx, w)
    return windows


# --------------------------------------------------------------------------
# report


def fmt(v: float | None, digits: int = 0) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def signed(v: float | None) -> str:
    if v is None or math.isnan(v):
        return "—"
    return ("+" if v >= 0 else MINUS) + f"{abs(v):,.0f}"


def lat(d: dict[str, Any] | None) -> str:
    if not d or not d.get("n"):
        return "—"
    return f"{d['p50']:.0f} / {d['p99']:.0f} / {d['max']:.0f}"


def attribute(windows: list[Window]) -> float:
    """Fill in delta_per_min: commands beyond what the load alone costs per completed job."""
    base = [w for w in windows if w.server == "baseline" and w.jobs_completed > 0]
    if not base:
        return float("nan")
    per_job = sum(w.total for w in base) / sum(w.jobs_completed for w in base)
    for w in windows:
        if w.jobs_completed > 0 and w.seconds > 0:
            delta = w.total - per_job * w.jobs_completed
            w.delta_per_min = delta / w.seconds * 60
            if w.server == "bullboard" and w.tab_requests:
                w.delta_per_poll = delta / w.tab_requests
    return float(per_job)


@dataclass
class Verdict:
    what: str
    value: str
    bound: str
    met: bool | None


def verdicts(windows: list[Window], soak: Window | None, per_poll: float) -> list[Verdict]:
    out: list[Verdict] = []
    pen = {
        w.clients: w for w in windows if w.server == "bullpen" and not w.label.startswith("soak")
    }
    pen.pop(0, None)
    base_noise = [abs(w.delta_per_min or 0) for w in windows if w.server == "baseline"]
    noise = max(base_noise) if base_noise else 0.0

    one, hundred = pen.get(1), pen.get(100)
    if one and hundred and one.delta_per_min is not None and hundred.delta_per_min is not None:
        bound = SCALE_BOUND * one.delta_per_min
        out.append(
            Verdict(
                f"Bullpen Δ cmds/min, 100 viewers ≤ {SCALE_BOUND}{TIMES} 1 viewer",
                f"{signed(hundred.delta_per_min)} vs {signed(one.delta_per_min)} "
                f"(totals {hundred.per_min:,.0f} vs {one.per_min:,.0f}: "
                f"{hundred.per_min / one.per_min:.3f}{TIMES})",
                f"≤ {signed(bound)} (baseline noise ±{noise:,.0f})",
                hundred.delta_per_min <= max(bound, one.delta_per_min + noise),
            )
        )
    if per_poll and pen:
        # One tab polls 60 / BULLBOARD_INTERVAL times a minute. Its cost per poll is measured
        # on the idle Redis before the load starts: exact, where the windows' Δ of a few
        # thousand commands a minute is within the load's own noise.
        one_tab = per_poll * 60 / BULLBOARD_INTERVAL
        worst = max(pen.values(), key=lambda w: w.delta_per_min or 0)
        out.append(
            Verdict(
                "Bullpen Δ cmds/min (worst N) ≤ one Bull Board tab's",
                f"{signed(worst.delta_per_min)} ({worst.clients} viewers)",
                f"≤ {one_tab:,.0f} ({per_poll:,.0f} per poll "
                f"{TIMES} {60 / BULLBOARD_INTERVAL:g} polls/min)",
                (worst.delta_per_min or 0) <= one_tab,
            )
        )
    for n, w in sorted(pen.items()):
        for key, title in (
            ("queue", "queue page (progress + rows)"),
            ("overview", "overview counts"),
        ):
            d = w.latency.get(key)
            if d and d.get("n"):
                out.append(
                    Verdict(
                        f"event→client p99, {title}, {n} viewers",
                        f"{d['p99']:.0f} ms",
                        f"≤ {LATENCY_P99_MS:.0f} ms",
                        d["p99"] <= LATENCY_P99_MS,
                    )
                )
    if soak and soak.rss_start and soak.rss_end:
        growth = soak.rss_end - soak.rss_start
        bound = min(SOAK_GROWTH * soak.rss_start, SOAK_GROWTH_MIB)
        peak = max(v for _, v in soak.rss_samples)
        out.append(
            Verdict(
                f"RSS flat over the soak (end {MINUS} start)",
                f"{soak.rss_start:.1f} → {soak.rss_end:.1f} MiB (max {peak:.1f})",
                f"≤ +{bound:.1f} MiB",
                growth <= bound,
            )
        )
    elif not soak:
        out.append(Verdict("RSS flat over the soak", "not run (--soak-minutes)", "", None))
    return out


def render(
    windows: list[Window], meta: dict[str, Any], per_job: float
) -> tuple[str, list[Verdict]]:
    lines = [f"## Bullpen live updates vs Bull Board polling — {meta['date']}", ""]
    keys = ["cpu", "redis", "load", "windows", "bull board poll", "websocket extensions"]
    keys.append("bullpen processes")
    for k in (*keys, "versions", "fd limit"):
        if meta.get(k):
            lines.append(f"- {k}: {meta[k]}")
    lines.append(
        f"- Δ = Redis cmds/min beyond the load generator's own: window total {MINUS} "
        f"{per_job:.1f} cmds {TIMES} jobs completed in the window (the baselines' cmds per job)"
    )
    busiest = max((w.cpu.get("other processes", 0.0) for w in windows), default=0.0)
    if busiest >= 20:
        lines.append(
            f"- ⚠ other processes on this machine used up to {busiest:.0f} % of a core during "
            f"the windows (see the CPU notes): latency and server CPU figures are contended"
        )
    lines.append("")
    head = [
        "window",
        "jobs/s",
        "Redis cmds/min",
        "Δ cmds/min",
        "Redis CPU",
        "server CPU",
        "server RSS MiB",
        "queue page ms p50/p99/max",
        "overview ms p50/p99/max",
        "msgs/s per viewer (queue / overview)",
    ]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for w in windows:
        rss = (
            f"{w.rss_start:.1f} → {w.rss_end:.1f}"
            if w.rss_start is not None and w.rss_end is not None
            else "—"
        )
        if w.server == "bullpen" and w.clients:
            msgs = f"{fmt(w.msgs_per_s.get('queue'), 1)} / {fmt(w.msgs_per_s.get('overview'), 1)}"
        elif w.server == "bullboard":
            msgs = f"{w.tab_requests} polls, p50 {fmt(w.tab_p50_ms)} ms"
        else:
            msgs = "—"
        lines.append(
            "| "
            + " | ".join(
                [
                    w.label,
                    fmt(w.jobs_per_s),
                    fmt(w.per_min),
                    signed(w.delta_per_min),
                    f"{w.redis_cpu_pct:.0f} %",
                    f"{w.server_cpu_pct:.0f} %" if w.server_cpu_pct is not None else "—",
                    rss if w.server != "baseline" else f"Bullpen {rss}",
                    lat(w.latency.get("queue")) if w.server == "bullpen" else "—",
                    lat(w.latency.get("overview")) if w.server == "bullpen" else "—",
                    msgs,
                ]
            )
            + " |"
        )
    lines.append("")
    soak = next((w for w in windows if w.label.startswith("soak")), None)
    vs = verdicts(windows, soak, meta.get("bullboard_per_poll", 0.0))
    lines.append("| target | value | bound | met |")
    lines.append("|---|---|---|---|")
    for v in vs:
        met = "—" if v.met is None else ("met" if v.met else "**not met**")
        lines.append(f"| {v.what} | {v.value} | {v.bound} | {met} |")
    lines.append("")

    details = []
    base = [w for w in windows if w.server == "baseline"]
    for w in windows:
        if w.server == "baseline":
            details.append(
                f"- {w.label}: {w.per_job:.2f} cmds per job; CPU (% of one core): "
                + ", ".join(f"{k} {v:.0f}" for k, v in w.cpu.items())
            )
            continue
        # Per-command increase over the (mean) baseline, per minute.
        extra = {}
        for name in set(w.calls) | {k for b in base for k in b.calls}:
            mine = w.calls.get(name, 0) / w.seconds * 60
            theirs = sum(b.calls.get(name, 0) for b in base) / sum(b.seconds for b in base) * 60
            if w.jobs_per_s and base:
                bj = sum(b.jobs_per_s for b in base) / len(base)
                theirs *= w.jobs_per_s / bj if bj else 1.0
            if abs(mine - theirs) >= 60:
                extra[name] = mine - theirs
        top = sorted(extra.items(), key=lambda kv: -abs(kv[1]))[:8]
        parts = [f"{k} {signed(v)}" for k, v in top]
        line = f"- {w.label}: " + (", ".join(parts) if parts else "no command changed by ≥ 1/s")
        if w.delta_per_poll is not None:
            line += f"; Δ per poll {w.delta_per_poll:,.0f} cmds"
        if w.server == "bullpen" and w.clients:
            q = w.latency
            line += (
                f"; progress {lat(q.get('progress'))} ms ({q['progress']['n']:,}), "
                f"rows {lat(q.get('rows'))} ms ({q['rows']['n']:,}), "
                f"queue-page counts {lat(q.get('queue-counts'))} ms; "
                f"overview counts from the server's send to receipt "
                f"{lat(q.get('overview-sent'))} ms; "
                f"opened in {w.connect_s:.1f} s by {w.client_procs} client "
                f"process{'es' if w.client_procs != 1 else ''}"
            )
            if w.slow_seconds:
                shown = ", ".join(f"{sec}s: {ms:,}" for sec, ms in w.slow_seconds[:12])
                more = len(w.slow_seconds) - 12
                line += (
                    f"; {len(w.slow_seconds)} of {w.seconds:.0f} seconds had a queue-page update "
                    f"over {LATENCY_P99_MS:.0f} ms (second: worst ms) {shown}"
                    + (f" and {more} more" if more > 0 else "")
                )
            if w.completed_seen is not None and w.bench00_completed:
                line += (
                    f"; completed rows seen by one queue viewer {w.completed_seen:,} "
                    f"of ~{w.bench00_completed:,.0f}"
                )
        line += "; CPU (% of one core): " + ", ".join(f"{k} {v:.0f}" for k, v in w.cpu.items())
        line += f"; load average {w.load_average}"
        if w.readers:
            line += f"; {w.readers}"
        for e in w.errors:
            line += f"\n  - ⚠ {e}"
        details.append(line)
    if soak and soak.rss_samples:
        details.append(
            "- soak RSS samples (s: MiB): "
            + ", ".join(f"{t:.0f}: {v:.1f}" for t, v in soak.rss_samples)
        )
    if meta.get("rss"):
        details.append(f"- Bullpen RSS: {meta['rss']}")
    if meta.get("server_log"):
        details.append(f"- Bullpen server log: {meta['server_log']}")
    lines.append("Per-command change against the baseline (per minute), and notes:")
    lines.extend(details)
    return "\n".join(lines) + "\n", vs


# --------------------------------------------------------------------------
# set-up


def scan_log(path: Path) -> tuple[int, list[str]]:
    bad = re.compile(r"Traceback|ERROR|CRITICAL|Exception|WARNING|exception", re.I)
    hits = []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return 0, []
    for line in text.splitlines():
        # Django's start-up system-check notes (a "WARNINGS:" header and "?: (app.W001) ..."
        # lines) are configuration advice, not run-time trouble.
        if line.strip() == "WARNINGS:" or re.match(r"^\S*: \(\w+\.W\d+\)", line):
            continue
        if bad.search(line):
            hits.append(line.strip())
    return len(hits), hits[:15]


def plan_seconds(a: argparse.Namespace) -> float:
    win = a.window
    total: float = a.warmup + a.baselines * (win + 1)
    total += len(a.bullboard_tabs) * (BULLBOARD_INTERVAL + win + 5)
    total += sum(a.settle + win + 8 + n / 20 for n in a.viewers)
    total += (a.settle + win + 2) if a.idle_window else 0
    if a.soak_minutes > 0:
        total += a.settle + a.soak_minutes * 60 + 10 + a.soak_viewers / 20
    return total


def parse_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def client_procs(a: argparse.Namespace, n: int) -> int:
    return max(1, math.ceil(n / max(1, int(a.viewers_per_process))))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--viewer-child"]:
        asyncio.run(viewer_child(json.loads(argv[1])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="15 s windows, shorter settles")
    ap.add_argument(
        "--viewers", default="1,10,100,500", help="viewer counts (default 1,10,100,500)"
    )
    ap.add_argument(
        "--viewers-per-process",
        type=int,
        default=VIEWERS_PER_PROCESS,
        help=f"viewers per client process (default {VIEWERS_PER_PROCESS})",
    )
    ap.add_argument("--window", type=float, help="seconds per measurement window (default 60)")
    ap.add_argument("--settle", type=float, help="seconds after opening viewers (default 10)")
    ap.add_argument("--warmup", type=float, help="seconds of load before the first window")
    ap.add_argument(
        "--queue-share",
        type=float,
        default=0.5,
        help=f"share of viewers on the {QUEUE_PAGE} queue page, the rest on the overview "
        "(default 0.5; a single viewer is on the queue page)",
    )
    ap.add_argument("--bullboard-tabs", default="1,10", help="Bull Board tab counts (default 1,10)")
    ap.add_argument("--baselines", type=int, default=2, help="baseline windows (default 2)")
    ap.add_argument(
        "--poll-samples", type=int, default=50, help="Bull Board polls for its cost per poll"
    )
    ap.add_argument("--no-idle-window", dest="idle_window", action="store_false")
    ap.add_argument("--soak-minutes", type=float, default=0.0, help="soak length (default: none)")
    ap.add_argument("--soak-viewers", type=int, default=100)
    ap.add_argument("--soak-sample", type=float, default=30.0, help="RSS every S s in the soak")
    ap.add_argument("--rate", type=float, default=200.0, help="jobs per second (default 200)")
    ap.add_argument("--mix", default=DEFAULT_MIX, help=f"queue:weight list (default {DEFAULT_MIX})")
    ap.add_argument("--steps", type=int, default=4, help="updateProgress calls per job")
    ap.add_argument("--step-ms", type=float, default=25.0, help="sleep before each progress step")
    ap.add_argument("--prefix", default="bull")
    ap.add_argument(
        "--interest-key",
        default="bullpen:live:interest",
        help="Bullpen's live interest hash, checked after the viewers close",
    )
    ap.add_argument(
        "--bullpen-cmd",
        default=DEFAULT_BULLPEN_CMD,
        help="shell command starting Bullpen in the repository root with REDIS_URL, "
        "BULLMQ_PREFIX, HOST and PORT set (default ./run serve)",
    )
    ap.add_argument(
        "--bullpen-processes",
        type=int,
        default=1,
        help="Bullpen server processes, each on its own port, viewers spread over them in turn; "
        "more than one share a throw-away Redis as their channel layer (CHANNEL_LAYER_URL)",
    )
    ap.add_argument("--redis-ports", default="6700-6799")
    ap.add_argument("--http-ports", default="8700-8799")
    ap.add_argument("--startup-timeout", type=float, default=120.0)
    ap.add_argument("--fail-on-miss", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--out", type=Path, help="report path (default bench/out/live-<time>.md)")
    args = ap.parse_args(argv)

    args.viewers = parse_list(args.viewers)
    args.bullboard_tabs = parse_list(args.bullboard_tabs)
    if args.window is None:
        args.window = 15.0 if args.quick else 60.0
    if args.settle is None:
        args.settle = 5.0 if args.quick else 10.0
    if args.warmup is None:
        args.warmup = 10.0 if args.quick else 20.0
    if any(n < 1 for n in args.viewers) or any(t < 1 for t in args.bullboard_tabs):
        sys.exit("--viewers and --bullboard-tabs take positive counts")
    if args.bullpen_processes < 1:
        sys.exit("--bullpen-processes takes a positive count")
    if args.window < 5 or args.baselines < 1:
        sys.exit("--window must be ≥ 5 s and --baselines ≥ 1")

    for tool in ("node", "redis-server"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found on PATH")
    most = max([*args.viewers, args.soak_viewers if args.soak_minutes > 0 else 0])
    fd_limit = raise_fd_limit(most + 512)

    procs = Processes()
    tmp = Path(tempfile.mkdtemp(prefix="bullpen-live-"))
    OUT_DIR.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")

    def on_signal(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    try:
        return run(args, procs, tmp, stamp, fd_limit)
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        procs.stop_all()
        names = [f"{server_log_name(i)}.log" for i in range(args.bullpen_processes)]
        for name in (*names, "bullboard.log", "live_load.log", "redis.log", "layer-redis.log"):
            src = tmp / name
            if src.exists():
                with contextlib.suppress(OSError):
                    shutil.copy(src, OUT_DIR / f"live-{stamp}-{name}")
        shutil.rmtree(tmp, ignore_errors=True)


def server_log_name(i: int) -> str:
    """The i-th Bullpen process's log name (the first keeps the name of a one-process run)."""
    return "bullpen" if i == 0 else f"bullpen-{i + 1}"


def start_redis(procs: Processes, port: int, tmp: Path, name: str) -> Popen:
    """A throw-away ``redis-server`` on ``port``, answering; its log is ``tmp/<name>.log``."""
    folder = tmp / name
    folder.mkdir(exist_ok=True)
    proc = procs.start(
        name,
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
            str(folder),
            "--maxclients",
            "10000",
        ],
        log_path=tmp / f"{name}.log",
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            redis_py.Redis(port=port).ping()
            return proc
        except redis_py.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("redis-server did not start:\n" + (tmp / f"{name}.log").read_text())
            time.sleep(0.1)


def run(args: argparse.Namespace, procs: Processes, tmp: Path, stamp: str, fd_limit: str) -> int:
    meta: dict[str, Any] = {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "fd limit": fd_limit,
    }
    if not (NODE_DIR / "node_modules" / "bullmq").exists():
        log("installing bench/node dependencies (npm ci)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)

    lo, hi = parse_range(args.redis_ports)
    hlo, hhi = parse_range(args.http_ports)
    rport = free_port(lo, hi)
    redis_url = f"redis://127.0.0.1:{rport}/0"
    log(f"starting redis-server on port {rport}")
    rproc = start_redis(procs, rport, tmp, "redis")
    r = redis_py.Redis.from_url(redis_url, decode_responses=True)
    meta["redis"] = f"redis {r.info('server').get('redis_version')} on 127.0.0.1:{rport}"

    log(f"creating {N_QUEUES} queues")
    subprocess.run(
        [
            "node",
            str(NODE_DIR / "live_load.mjs"),
            "--redis",
            redis_url,
            "--prefix",
            args.prefix,
            "--setup",
            str(N_QUEUES),
            "--duration",
            "0",
        ],
        cwd=NODE_DIR,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
    )

    # Servers.
    bb_port = free_port(hlo, hhi)
    bp_ports: list[int] = []
    for _ in range(args.bullpen_processes):
        bp_ports.append(free_port(hlo, hhi, exclude={bb_port, *bp_ports}))
    bp_port = bp_ports[0]
    bb_proc = procs.start(
        "bull board",
        [
            "node",
            str(NODE_DIR / "bullboard.mjs"),
            "--redis",
            redis_url,
            "--prefix",
            args.prefix,
            "--port",
            str(bb_port),
            "--queues",
            str(N_QUEUES),
        ],
        cwd=NODE_DIR,
        log_path=tmp / "bullboard.log",
    )
    env = dict(os.environ)
    env.update(REDIS_URL=redis_url, BULLMQ_PREFIX=args.prefix, HOST="127.0.0.1")
    # Every viewer is an anonymous page from this one address.
    env.setdefault("BULLPEN_MAX_SOCKETS_PER_CLIENT", "100000")
    layer_pid = None
    if len(bp_ports) > 1:
        layer_port = free_port(lo, hi, exclude={rport})
        log(f"starting the channel layer's redis-server on port {layer_port}")
        layer_pid = start_redis(procs, layer_port, tmp, "layer-redis").pid
        env["CHANNEL_LAYER_URL"] = f"redis://127.0.0.1:{layer_port}/0"
        meta["bullpen processes"] = (
            f"{len(bp_ports)} daphne processes (ports {', '.join(map(str, bp_ports))}), viewers "
            f"spread over them in turn; channel layer: Redis pub/sub on port {layer_port}"
        )
    bp_pids: list[int] = []
    for i, port in enumerate(bp_ports):
        name = server_log_name(i)
        cmd = args.bullpen_cmd.format(port=port, redis_url=redis_url, prefix=args.prefix)
        log(f"starting Bullpen: {cmd} (port {port}); Bull Board on port {bb_port}")
        bp_proc = procs.start(
            name,
            ["/bin/sh", "-c", cmd],
            cwd=REPO_DIR,
            env={**env, "PORT": str(port)},
            log_path=tmp / f"{name}.log",
        )
        # One after the other: each start also collects static files and migrates.
        log_path = tmp / f"{name}.log"
        wait_http(port, BULLPEN_READY, bp_proc, "Bullpen", args.startup_timeout, log_path)
        status, body = http_get(port, BULLPEN_READY)
        n_seen = body.count(b'"bench-')
        log(f"Bullpen answers ({status}); {n_seen} mentions of bench queues in its queue list")
        bp_pids.append(find_server_pid(bp_proc, "daphne"))
    wait_http(
        bb_port, BULLBOARD_POLL, bb_proc, "Bull Board", args.startup_timeout, tmp / "bullboard.log"
    )
    bp_pid = bp_pids[0]
    bb_pid = find_server_pid(bb_proc, "bullboard.mjs")
    meta["bullpen_rss_start"] = rss_mib(bp_pid)

    # Bull Board's cost per poll, on the idle Redis (no load yet, Bullpen idle).
    per_poll, by_cmd = poll_cost(r, bb_port, args.poll_samples)
    meta["bullboard_per_poll"] = per_poll
    top = ", ".join(f"{k} {v:.0f}" for k, v in list(by_cmd.items())[:6])
    meta["bull board poll"] = (
        f"{BULLBOARD_POLL} costs {per_poll:,.0f} Redis commands ({top}, ...; over "
        f"{args.poll_samples} polls on the idle Redis): one tab = "
        f"{per_poll * 60 / BULLBOARD_INTERVAL:,.0f} cmds/min"
    )
    log(meta["bull board poll"])

    # Load.
    duration = plan_seconds(args) + 180 + 150  # + the wait for retention
    load_log = tmp / "live_load.log"
    load_cmd = [
        "node",
        str(NODE_DIR / "live_load.mjs"),
        "--redis",
        redis_url,
        "--prefix",
        args.prefix,
        "--rate",
        repr(args.rate),
        "--duration",
        str(math.ceil(duration)),
        "--mix",
        args.mix,
        "--steps",
        str(args.steps),
        "--step-ms",
        repr(args.step_ms),
    ]
    log(f"starting the load generator ({args.rate:g} jobs/s, at most {duration:.0f} s)")
    load_proc = procs.start("load generator", load_cmd, cwd=NODE_DIR, log_path=load_log)
    time.sleep(args.warmup)
    s = load_sample(load_log)
    if load_proc.poll() is not None or s is None:
        sys.exit(
            "the load generator did not start:\n" + load_log.read_text(errors="replace")[-3000:]
        )
    log(f"warm-up done: {s.added} jobs added, {s.completed} completed")
    wait_for_retention(r, args.prefix, args.mix, keep=1000, limit_s=150)

    meta["cpu"] = f"{cpu_model()} ({os.cpu_count()} CPUs), {platform.system()} {platform.release()}"
    meta["load"] = (
        f"{args.rate:g} jobs/s over {args.mix}; {args.steps} updateProgress steps "
        f"{args.step_ms:g} ms apart; removeOnComplete/removeOnFail 1000; "
        f"{N_QUEUES} queues exist"
    )
    meta["windows"] = (
        f"{args.window:g} s each after {args.settle:g} s settle ({args.warmup:g} s load warm-up); "
        f"{args.queue_share:.0%} of viewers on the {QUEUE_PAGE} queue page, the rest on the "
        f"overview, {args.viewers_per_process} viewers per client process; Bull Board tabs "
        f"poll {BULLBOARD_POLL} every {BULLBOARD_INTERVAL:g} s"
    )
    meta["versions"] = ", ".join(
        [
            f"Bullpen {bullpen_version()}",
            f"Python {platform.python_version()}",
            f"daphne {python_pkg_version('daphne')}",
            f"channels {python_pkg_version('channels')}",
            f"redis-py {python_pkg_version('redis')}",
            f"websockets {python_pkg_version('websockets')} (viewers)",
            f"node {cmd_output(['node', '--version']).lstrip('v')}",
            f"bullmq {node_pkg_version('bullmq')}",
            f"@bull-board/api {node_pkg_version('@bull-board/api')}",
        ]
    )

    load_pid = find_server_pid(load_proc, "live_load.mjs")
    ctx = Ctx(
        args,
        r,
        load_log,
        load_proc,
        bp_port,
        bp_pid,
        bb_port,
        bb_pid,
        load_pid,
        rproc.pid,
        args.interest_key,
        bullpen_ports=bp_ports,
        bullpen_pids=bp_pids,
        layer_redis_pid=layer_pid,
        redis_url=redis_url,
    )
    windows = asyncio.run(run_windows(ctx, meta))
    meta["rss"] = (
        f"{meta['bullpen_rss_start']:.1f} MiB when ready, "
        f"{meta['bullpen_rss_before_viewers']:.1f} MiB before the first viewer, "
        f"{rss_mib(bp_pid):.1f} MiB at the end"
    )

    per_job = attribute(windows)
    notes = []
    for i in range(len(bp_pids)):
        n_bad, first_bad = scan_log(tmp / f"{server_log_name(i)}.log")
        notes.append(
            f"{n_bad} suspicious lines (errors, warnings, tracebacks)"
            + ("".join(f"\n  - `{line[:200]}`" for line in first_bad) if first_bad else "")
            + f"\n  - full log: bench/out/live-{stamp}-{server_log_name(i)}.log"
        )
    meta["server_log"] = "; ".join(notes)
    report, vs = render(windows, meta, per_job)
    print(report)
    out = args.out or (OUT_DIR / f"live-{stamp}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report)
    raw = {
        "meta": meta,
        "cmds_per_job": per_job,
        "verdicts": [v.__dict__ for v in vs],
        "windows": [
            {
                **{k: v for k, v in w.__dict__.items() if k != "calls"},
                "per_min": w.per_min,
                "calls": dict(sorted(w.calls.items(), key=lambda kv: -kv[1])),
            }
            for w in windows
        ],
    }
    out.with_suffix(".json").write_text(json.dumps(raw, indent=2, default=str) + "\n")
    log(f"report written to {out}")
    if args.fail_on_miss and not all(v.met for v in vs if v.met is not None):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
