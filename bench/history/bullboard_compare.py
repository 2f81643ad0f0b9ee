#!/usr/bin/env python3
"""Bullpen's history side by side with Bull Board 9.10's metrics: the same jobs, one Redis.

Needs ``@bull-board/metrics`` built outside this repository (it is not on the npm registry;
bench/README.md says how) and ``BULL_BOARD_METRICS_DIR`` pointing at it. From the repository
root::

    BULL_BOARD_METRICS_DIR=/tmp/bb-metrics/packages/metrics \\
        ./.venv/bin/python bench/history/bullboard_compare.py            # about 6 minutes
    ... bullboard_compare.py --quick                                     # about 5 minutes

A throw-away ``redis-server``; in it, Node BullMQ workers (native metrics on, as Bull Board's
recorder needs) run bursts of jobs of three names with skewed run times, a few failing
(node/bullboard_metrics.mjs); Bull Board's ``MetricsRecorder`` (its defaults: a tick a
minute) and Bullpen's live reader (``queues.live.follower.Follower``, history on, nobody
watching) record them at the same time. Then:

* A, once both have recorded everything the load finished: counts and wait/run
  p50/p95/p99 of each (Bullpen's ``read_history`` / ``read_names``, Bull Board's provider
  ``getHistory`` / ``getLatency``) against the truth from BullMQ's own timestamps read back
  from every job; Bullpen's per-name rows against each name's truth;
* B, after one more job finished in a later minute and 5 jobs were left waiting: counts again
  (BullMQ's metrics hand over a minute's count only once a job finishes in a later minute)
  and the oldest-waiting gauge of each against the true age;
* Redis commands per finished job each spent recording, split by sender (``MONITOR`` and the
  connections' names, redis_monitor.py), and an idle minute of each before the load;
* memory: ``MEMORY USAGE`` of every key each keeps (and BullMQ's metrics lists).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare_report import Truth, report  # noqa: E402
from history_bench import ROOT, setup_django, start_redis  # noqa: E402
from redis_monitor import Monitor  # noqa: E402

QUEUE = "cmp"
BACKLOG = 5


class Node:
    """node/bullboard_metrics.mjs: one command a line, one JSON answer a line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, url: str) -> tuple[Node, dict[str, Any]]:
        proc = await asyncio.create_subprocess_exec(
            "node",
            "bullboard_metrics.mjs",
            "--redis",
            url,
            "--queue",
            QUEUE,
            cwd=ROOT / "bench" / "node",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=2**24,
        )
        node = cls(proc)
        return node, await node._answer()

    async def call(self, command: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{command}\n".encode())
        await self.proc.stdin.drain()
        return await self._answer()

    async def _answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the Node side ended (its error is above)")
        found: dict[str, Any] = json.loads(line)
        if "error" in found:
            raise RuntimeError(found["error"])
        return found


def truth(sync: Any, up_to_id: int | None = None) -> Truth:
    """Counts and durations of every finished job (ids up to ``up_to_id``), from the job
    hashes BullMQ wrote."""
    found = Truth()
    for state in ("completed", "failed"):
        ids = sync.zrange(f"bull:{QUEUE}:{state}", 0, -1)
        pipe = sync.pipeline(transaction=False)
        for job_id in ids:
            pipe.hmget(
                f"bull:{QUEUE}:{job_id}", "name", "timestamp", "delay", "processedOn", "finishedOn"
            )
        for job_id, (name, added, delay, processed, finished) in zip(
            ids, pipe.execute(), strict=True
        ):
            if up_to_id is not None and int(job_id) > up_to_id:
                continue
            wait = int(processed) - int(added) - int(delay or 0)
            found.add(name, state, wait, int(finished) - int(processed))
    return found


def oldest_waiting(sync: Any, now_ms: int) -> int | None:
    ids = sync.lrange(f"bull:{QUEUE}:wait", 0, -1)
    dues = [
        int(sync.hget(f"bull:{QUEUE}:{job_id}", "timestamp"))
        + int(sync.hget(f"bull:{QUEUE}:{job_id}", "delay") or 0)
        for job_id in ids
    ]
    return now_ms - min(dues) if dues else None


async def read_bullpen(ref: Any, expected: int, deadline_s: float) -> tuple[Any, Any, int]:
    """Bullpen's series and names over the last hour, read once it has recorded ``expected``
    finished jobs (or at the deadline): those of the load's last minute are written once that
    minute has closed."""
    from queues.history.read import read_history, read_names

    deadline = time.monotonic() + deadline_s
    while True:
        now = int(time.time() * 1000)
        series = await read_history(ref, "1h", now_ms=now)
        totals = series.totals
        if totals.completed + totals.failed >= expected or time.monotonic() > deadline:
            return series, await read_names(ref, "1h", now_ms=now), now
        await asyncio.sleep(0.5)


async def until_minute_closed(at_ms: int) -> None:
    """Bullpen writes a minute 5 s after it ends (queues/history/recorder.py's grace)."""
    closes = at_ms - at_ms % 60_000 + 65_000
    await asyncio.sleep(max(0.0, closes / 1000 - time.time()))


def memory(sync: Any, pattern: str) -> tuple[int, int]:
    keys = list(sync.scan_iter(pattern, count=1000))
    return len(keys), sum(int(sync.memory_usage(key, samples=0) or 0) for key in keys)


async def run(args: argparse.Namespace, url: str, port: int, tmp: Path) -> dict[str, Any]:
    import redis

    from queues.cancelling import cancel_and_wait
    from queues.history.storage import base
    from queues.live.follower import Follower
    from queues.live.interest import Interest
    from queues.live.settings import LiveSettings
    from queues.reads.keys import QueueRef
    from queues.redis.clients import close_current

    sync = redis.Redis(port=port, decode_responses=True, client_name="bench")
    monitor = Monitor(port, tmp / "monitor.log")
    polling = asyncio.ensure_future(monitor.poll_clients(sync))
    node, ready = await Node.start(url)
    ports = {f"127.0.0.1:{p}": "bullboard" for p in ready["ports"].values() if p}
    ref = QueueRef("bull", QUEUE)

    async def nowhere(topic: Any, message: Any) -> None:
        pass

    follower = Follower(nowhere, Interest(), LiveSettings())
    following = asyncio.ensure_future(follower.run())
    deadline = time.monotonic() + 30
    while not (follower.leader and ref in follower.streams.refs.values()):
        assert time.monotonic() < deadline, "Bullpen's reader did not follow the queue"
        await asyncio.sleep(0.1)

    marks: dict[str, tuple[float, float]] = {}
    load: list[float] = [os.getloadavg()[0]]
    if args.idle:
        started = time.time()
        await asyncio.sleep(args.idle)
        marks["idle"] = (started, time.time())
    started = time.time()
    loaded = await node.call(f"load {args.seconds} {args.rate}")
    load.append(os.getloadavg()[0])
    # Both have recorded every job of the load: Bullpen once the last minute closed, Bull
    # Board at the first tick 5 s (its safety margin) past the last finish.
    await until_minute_closed(loaded["finishedAt"])
    tick_a = await node.call(f"tick {loaded['finishedAt'] + 5000}")
    marks["recording"] = (started, time.time())
    truth_a = truth(sync, up_to_id=loaded["added"])
    bullpen_a = await read_bullpen(ref, truth_a.finished, 30)
    # Bull Board's hour points are stamped at the hour's start, and it leaves out a point
    # stamped before ``from``: read from the start of the load's hour.
    since = (int(started * 1000) - 120_000) // 3_600_000 * 3_600_000
    board_a = await node.call(f"read {since}")

    # B: one more job in a later minute than the load's last, and a backlog left waiting.
    if time.time() * 1000 // 60_000 == loaded["finishedAt"] // 60_000:
        await asyncio.sleep(60.5 - time.time() % 60)
    one = await node.call("one")
    backlog = await node.call(f"backlog {BACKLOG}")
    await until_minute_closed(one["finishedAt"])
    tick_b = await node.call(f"tick {max(one['finishedAt'], backlog['addedAt']) + 5000}")
    truth_b = truth(sync)
    bullpen_b = await read_bullpen(ref, truth_b.finished, 30)
    board_b = await node.call(f"read {since}")
    oldest_true = oldest_waiting(sync, bullpen_b[2])
    oldest_at_tick = oldest_waiting(sync, tick_b["started"])

    mem = {
        "bullpen": memory(sync, f"{base(ref)}:*"),
        "bullboard": memory(sync, f"bull-board:metrics:{QUEUE}:*"),
        "bullboard global": memory(sync, "bull-board:metrics:__global__:*"),
        "bullmq metrics": memory(sync, f"bull:{QUEUE}:metrics:*"),
    }
    load.append(os.getloadavg()[0])
    steady = await steady_memory(sync, node, url) if args.steady else None
    await node.call("quit")
    await asyncio.wait_for(node.proc.wait(), 30)
    await cancel_and_wait(following)
    await close_current()
    polling.cancel()
    monitor.note_clients(sync.client_list())
    monitor.stop()
    parties = {addr: party_of(name) for addr, name in monitor.names.items()}
    parties.update(ports)
    return {
        "loaded": loaded,
        "ticks": (tick_a, tick_b),
        "truth": (truth_a, truth_b),
        "bullpen": (bullpen_a, bullpen_b),
        "board": (board_a, board_b),
        "oldest": {"true": oldest_true, "at_tick": oldest_at_tick, "tick": tick_b},
        "memory": mem,
        "steady": steady,
        "tally": monitor.tally(parties, marks),
        "marks": marks,
        "load": load,
    }


async def steady_memory(sync: Any, node: Node, url: str) -> dict[str, tuple[int, int]]:
    """What each keeps of a queue that finished 60 jobs every minute for 90 days (5 job names
    of 12 a minute for Bullpen), each written in its own format: Bullpen's as
    history_bench.py writes it, Bull Board's through its own stores (node/bullboard_metrics.mjs
    ``steady``). And the two lists of BullMQ's metrics Bull Board needs, at the workers'
    ``maxDataPoints`` of a week, measured on a scratch list of the same shape."""
    from history_bench import fill

    from queues.history.storage import base

    global_before = memory(sync, "bull-board:metrics:__global__:*")
    await node.call("steady steady 60")
    refs = await fill(url, 1, 12)
    found = {
        "bullpen": memory(sync, f"{base(refs[0])}:*"),
        "bullboard": memory(sync, "bull-board:metrics:steady:*"),
    }
    keys, size = memory(sync, "bull-board:metrics:__global__:*")
    found["bullboard global"] = (keys, size - global_before[1])
    lists = 0
    for value in ("60", "1"):
        sync.rpush("bench:metrics-shape", *([value] * 10_080))
        lists += int(sync.memory_usage("bench:metrics-shape", samples=0) or 0)
        sync.delete("bench:metrics-shape")
    found["bullmq metrics"] = (2, lists)
    return found


def party_of(name: str) -> str:
    if name.startswith("bb-"):
        return "bullboard" if name != "bb-reader" else "bullboard reads"
    if name == "bench":
        return "bench"
    if name == "load" or name.startswith("bull:"):
        return "load"
    return "bullpen"  # unnamed (its reader's) or bullpen-actions


async def main(args: argparse.Namespace) -> None:
    if not os.environ.get("BULL_BOARD_METRICS_DIR"):
        sys.exit("BULL_BOARD_METRICS_DIR is not set: build @bull-board/metrics (bench/README.md)")
    tmp = Path(tempfile.mkdtemp(prefix="bbcompare-"))
    proc, url = start_redis(tmp)
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        setup_django(url)
        found = await run(args, url, port, tmp)
        print(report(found, args))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="60 s of load, no idle minute")
    parser.add_argument("--seconds", type=int, default=120, help="seconds of load")
    parser.add_argument("--rate", type=int, default=25, help="jobs a second on average")
    parser.add_argument("--idle", type=int, default=60, help="seconds of idle cost measured")
    parser.add_argument(
        "--no-steady", dest="steady", action="store_false", help="skip the 90-day memory"
    )
    parsed = parser.parse_args()
    if parsed.quick:
        parsed.seconds, parsed.idle = 60, 0
    asyncio.run(main(parsed))
