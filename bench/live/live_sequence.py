"""The run's windows in order: baselines, Bull Board tabs, Bullpen's viewer counts, the idle
window after them and the soak; and how long they take."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import time
from typing import Any

from live_procs import rss_mib
from live_settings import BULLBOARD_INTERVAL, log
from live_tabs import TabStats, poll_tabs
from live_viewer_set import ViewerSet
from live_viewers import open_wait, viewer_kinds
from live_windows import Ctx, Window, measure


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
        viewers = ViewerSet(n, viewer_kinds(n, a.queue_share), client_procs(a, n), a.viewer_impl)
        await viewers.open(ctx.bullpen_ports, ctx.rec, open_wait(n))
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
        viewers = ViewerSet(n, viewer_kinds(n, a.queue_share), client_procs(a, n), a.viewer_impl)
        await viewers.open(ctx.bullpen_ports, ctx.rec, open_wait(n))
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


def plan_seconds(a: argparse.Namespace) -> float:
    win = a.window
    total: float = a.warmup + a.baselines * (win + 1)
    total += len(a.bullboard_tabs) * (BULLBOARD_INTERVAL + win + 5)
    total += sum(a.settle + win + 8 + n / 20 for n in a.viewers)
    total += (a.settle + win + 2) if a.idle_window else 0
    if a.soak_minutes > 0:
        total += a.settle + a.soak_minutes * 60 + 10 + a.soak_viewers / 20
    return total


def client_procs(a: argparse.Namespace, n: int) -> int:
    return max(1, math.ceil(n / max(1, int(a.viewers_per_process))))
