#!/usr/bin/env python3
"""The floor under Bullpen's live latency on this machine: a bare websocket fan-out.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/live/fanout_floor_bench.py --viewers 1,100,500,1000

One server process (the ``websockets`` library, no compression, as daphne serves Bullpen)
writes the same frame to every open socket every ``--interval`` ms (encoded once, written to
each: ``broadcast``); client processes of ``--per-process`` sockets each (as bench/live/
live_bench.py opens its viewers) take each frame's send time from it. No Django, no channel
layer, no Redis: what is left is the machine's own cost of writing and reading that many
frames. Prints p50/p99/max send→receipt per viewer count, the server's CPU and the client
processes' (``--viewer-impl node``: Node's WebSocket client, bench/node/live_viewers.mjs,
instead of Python ``websockets``; both on the same two cores as the server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import subprocess
import sys
import time
from typing import Any

try:
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import ServerConnection, broadcast, serve
except ImportError as exc:  # pragma: no cover - the project venv has it
    sys.exit(f"fanout_floor_bench.py needs {exc.name!r}: run it with ./.venv/bin/python")

CLK_TCK = os.sysconf("SC_CLK_TCK")
NODE_VIEWERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../node/live_viewers.mjs")


def now_ms() -> float:
    return time.time() * 1000.0


def pct(values: list[float], p: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


async def child(port: int, n: int, seconds: float) -> None:
    """Open ``n`` sockets, record every frame's send→receipt for ``seconds``, print them."""
    lat: list[float] = []

    async def one() -> None:
        async with connect(f"ws://127.0.0.1:{port}/", compression=None, max_size=2**24) as ws:
            end = time.monotonic() + seconds
            while (left := end - time.monotonic()) > 0:
                try:
                    raw = await asyncio.wait_for(ws.recv(decode=False), left)
                except TimeoutError:
                    break
                t = now_ms()
                frame = json.loads(raw)
                if frame.get("end"):
                    break
                if frame["kept"]:  # not a frame of the settle
                    lat.append(t - frame["at"])

    await asyncio.gather(*(one() for _ in range(n)))
    print(json.dumps(lat))


def machine_seconds() -> float:
    """CPU-seconds every core has been busy (not idle nor waiting), from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLK_TCK


def cpu_seconds(pid: int | None = None) -> float:
    try:
        with open(f"/proc/{pid or os.getpid()}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:  # a client that has already ended
        return math.nan
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


async def window(args: argparse.Namespace, viewers: int) -> dict[str, Any]:
    sockets: set[ServerConnection] = set()

    all_open = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        sockets.add(ws)
        if len(sockets) >= viewers:
            all_open.set()
        try:
            await ws.wait_closed()
        finally:
            sockets.discard(ws)

    pad = "x" * max(0, args.bytes - 40)
    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        procs = []
        left = viewers
        while left > 0:
            n = min(args.per_process, left)
            left -= n
            # The last frame ends the clients; their own limit only guards against a lost one.
            spec = f"{port},{n},{args.settle + args.window + 120}"
            if args.viewer_impl == "node":
                cmd = ["node", "--experimental-websocket", NODE_VIEWERS, "--floor", spec]
            else:
                cmd = [sys.executable, __file__, "--child", spec]
            procs.append(await asyncio.create_subprocess_exec(*cmd, stdout=subprocess.PIPE))
        await asyncio.wait_for(all_open.wait(), 60)
        start_cpu, start = cpu_seconds(), time.monotonic()
        # The clients' CPU over the counted frames, sampled while every client still runs.
        clients: list[tuple[float, float]] = []
        frames = 0
        while time.monotonic() - start < args.settle + args.window:
            # One text frame for everyone: the bytes are made once, written to each socket.
            counted = time.monotonic() - start >= args.settle
            if (counted and not clients) or (
                len(clients) == 1 and time.monotonic() - start >= args.settle + args.window - 1
            ):
                own = sum(cpu_seconds(p.pid) for p in procs)
                clients.append((time.monotonic(), own, cpu_seconds(), machine_seconds()))
            broadcast(sockets, json.dumps({"at": now_ms(), "kept": counted, "pad": pad}))
            frames += 1
            await asyncio.sleep(args.interval / 1000)
        cpu = (cpu_seconds() - start_cpu) / (time.monotonic() - start)
        broadcast(sockets, json.dumps({"end": True}))
        (t0, c0, s0, m0), (t1, c1, s1, m1) = clients[0], clients[-1]
        span = t1 - t0 if t1 > t0 else math.nan
        clients_cpu = (c1 - c0) / span
        # What else ran on the machine meanwhile (other work shares these cores).
        other_cpu = (m1 - m0 - (c1 - c0) - (s1 - s0)) / span
        lat: list[float] = []
        for proc in procs:
            out, _ = await proc.communicate()
            lat.extend(json.loads(out or b"[]"))
    kept = sorted(lat)
    return {
        "viewers": viewers,
        "frames": frames,
        "received": len(kept),
        "p50": pct(kept, 50),
        "p99": pct(kept, 99),
        "max": max(kept, default=math.nan),
        "cpu": cpu,
        "clients_cpu": clients_cpu,
        "other_cpu": other_cpu,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--viewers", default="1,100,500,1000")
    ap.add_argument("--interval", type=float, default=30.0, help="ms between frames")
    ap.add_argument("--bytes", type=int, default=1500, help="bytes a frame")
    ap.add_argument("--window", type=float, default=15.0)
    ap.add_argument("--settle", type=float, default=3.0)
    ap.add_argument("--per-process", type=int, default=125)
    ap.add_argument("--viewer-impl", choices=("python", "node"), default="python")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        port, n, seconds = args.child.split(",")
        asyncio.run(child(int(port), int(n), float(seconds)))
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 20000), hard))
    print(
        f"viewers: {args.viewer_impl}, {args.per_process} a process\n"
        "| viewers | frames/s per viewer | send→receipt p50 / p99 / max ms | server CPU |"
        " viewers' CPU | other CPU | load |\n"
        "|---:|---:|---:|---:|---:|---:|---:|"
    )
    for viewers in (int(v) for v in args.viewers.split(",")):
        found = asyncio.run(window(args, viewers))
        print(
            f"| {viewers} | {1000 / args.interval:.0f} | {found['p50']:.1f} / {found['p99']:.1f}"
            f" / {found['max']:.1f} | {found['cpu']:.0%} | {found['clients_cpu']:.0%}"
            f" | {found['other_cpu']:.0%} | {found['load']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
