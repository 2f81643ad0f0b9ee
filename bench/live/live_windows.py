"""One measurement window: the counters read before and after it (Redis, CPU, RSS, the load's
jobs), and what the viewers saw in it."""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import reader_check
import redis as redis_py
from live_counters import calls_between, load_sample, redis_sample
from live_hist import Hist
from live_procs import cpu_seconds, machine_busy, rss_mib
from live_settings import LATENCY_P99_MS, QUEUE_PAGE, log
from live_viewer_set import ViewerSet
from live_viewers import Recorder, ViewerStats
from servers import Popen  # bench/ is not a package: on sys.path from the driver


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
