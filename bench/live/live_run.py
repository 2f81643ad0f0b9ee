"""One run of the live benchmark: Redis, the queues, both servers and the load generator, then
the windows, and the report written to bench/out/ (+ its JSON)."""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import redis as redis_py
from live_counters import load_sample, wait_for_retention
from live_procs import find_server_pid, rss_mib, scan_log, server_log_name, start_redis
from live_report import attribute, render
from live_sequence import plan_seconds, run_windows
from live_settings import (
    BULLBOARD_INTERVAL,
    BULLBOARD_POLL,
    BULLPEN_READY,
    N_QUEUES,
    NODE_DIR,
    OUT_DIR,
    QUEUE_PAGE,
    REPO_DIR,
    log,
)
from live_tabs import poll_cost
from live_windows import Ctx
from machine import (  # bench/ is not a package: on sys.path from the driver
    bullpen_version,
    cmd_output,
    cpu_model,
    node_pkg_version,
    python_pkg_version,
)
from servers import (  # bench/ is not a package: on sys.path from the driver
    Processes,
    free_port,
    http_get,
    parse_range,
    start_bullboard,
    wait_http,
)


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
    bb_proc = start_bullboard(
        procs, redis_url, args.prefix, bb_port, tmp / "bullboard.log", queues=N_QUEUES
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
        f"overview, {args.viewers_per_process} viewers per client process ({args.viewer_impl}); "
        "Bull Board tabs "
        f"poll {BULLBOARD_POLL} every {BULLBOARD_INTERVAL:g} s"
    )
    meta["versions"] = ", ".join(
        [
            f"Bullpen {bullpen_version()}",
            f"Python {platform.python_version()}",
            f"daphne {python_pkg_version('daphne')}",
            f"channels {python_pkg_version('channels')}",
            f"redis-py {python_pkg_version('redis')}",
            f"websockets {python_pkg_version('websockets')} (viewers)"
            if args.viewer_impl == "python"
            else "node's WebSocket client (viewers)",
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
