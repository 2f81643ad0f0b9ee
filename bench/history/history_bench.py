#!/usr/bin/env python3
"""Job history benchmark: what recording costs the live reader and Redis, what history costs
in memory, and how long reading it takes.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/history/history_bench.py            # about 4 minutes
    ./.venv/bin/python bench/history/history_bench.py --quick    # about 2 minutes
    ./.venv/bin/python bench/history/history_bench.py --reads    # reading alone, about 1 minute

Steps: start a throw-away ``redis-server`` on a free port, then

* recording: 100 queues; a producer process writes, for 1,000 jobs/s spread over them, what
  BullMQ writes when a worker finishes a job: the job hash (``timestamp``, ``delay``,
  ``processedOn``, ``finishedOn``, ``name`` among 5, ``atm``, data, options), its ``active``
  and ``completed`` events (``XADD`` with BullMQ's ``MAXLEN ~ 10000``) and its place in the
  completed set. (Written directly: real Node workers at 1,000 jobs/s would take the two cores
  this runs on away from the reader measured.) In this process, the live reader
  (``queues.live.follower.Follower``, an overview watched) runs for a window with history
  recording on, and one with it off. Printed: the reader's CPU (process time ÷ wall time, %
  of one core), and Redis commands per finished job from ``INFO commandstats``: those of the
  commands only history sends (``HMGET``, ``SET``, ``MGET``, ``SADD``, ``HINCRBY``...), and the
  whole reader's (everything but the producer's known commands);
* memory: every minute of 24 h, hour of 30 d and day of 90 d in history's own format
  (summaries; sketches as long as they are kept), 5 job names a queue, 12 or 120 jobs a minute
  a name (1,000 jobs/s over 1,000 or 100 queues), log-normal durations; ``MEMORY USAGE`` of
  every key of 10 such queues, per queue and name, and scaled to 1,000 queues x 5 names;
* reading: ``read_history`` and ``read_names`` over ``90d``, ``30d`` and ``24h`` of one such
  queue, the median of 20 reads (wall and this process's CPU, ms, from Redis on this machine),
  the median CPU and wall time of 10 cold reads, which decode every span (a process keeps
  what it decoded of the spans and summaries it read, queues/history/kept.py), and the bytes
  Redis sends for one read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from bench.history.producer import (  # noqa: E402
    NAMES,
    PRODUCER_COMMANDS_PER_BATCH,
    PRODUCER_COMMANDS_PER_JOB,
    QUEUES,
    produce,
)
from bench.support import start_redis  # noqa: E402


def setup_django(url: str) -> None:
    from django.conf import settings

    settings.configure(
        SECRET_KEY="bench",  # noqa: S106 - a throw-away process
        INSTALLED_APPS=["queues"],
        USE_TZ=True,
        BULLPEN={"REDIS_URL": url, "DISCOVERY_INTERVAL": 0},
    )
    import django

    django.setup()


# ---- recording ---------------------------------------------------------------------------------


def commandstats(client: Any) -> dict[str, int]:
    info = client.info("commandstats")
    return {key.removeprefix("cmdstat_"): int(value["calls"]) for key, value in info.items()}


HISTORY_COMMANDS = (
    "hmget",
    "set",
    "mget",
    "sadd",
    "smembers",
    "expire",
    "hincrby",
    "hincrbyfloat",
    "get",
    "zrevrangebyscore",
    "lrange",
)


async def record_window(url: str, seconds: float, history: bool) -> dict[str, float]:
    import redis
    from django.conf import settings

    from queues.cancelling import cancel_and_wait
    from queues.config.settings import get_config
    from queues.live.follower import Follower
    from queues.live.interest import Interest
    from queues.live.settings import LiveSettings

    settings.BULLPEN = {**settings.BULLPEN, "HISTORY_RECORDING": history}
    get_config.cache_clear()
    sync = redis.Redis.from_url(url, decode_responses=True)
    sync.flushall()
    for index in range(QUEUES):
        sync.hset(f"bull:h{index:03d}:meta", mapping={"opts.maxLenEvents": 10000})
        sync.set(f"bull:h{index:03d}:id", 0)

    async def nowhere(topic: Any, message: Any) -> None:
        pass

    registry = Interest()
    registry.watch_overview()
    follower = Follower(nowhere, registry, LiveSettings())
    running = asyncio.ensure_future(follower.run())
    deadline = time.monotonic() + 20
    while not (follower.leader and len(follower.streams.refs) == QUEUES):
        assert time.monotonic() < deadline, "the reader did not follow every queue"
        await asyncio.sleep(0.1)
    producer = subprocess.Popen(  # noqa: ASYNC220 - started once, not awaited
        [sys.executable, __file__, "--produce", url, "--seconds", str(seconds + 3)]
    )
    await asyncio.sleep(3)  # warm up
    before = commandstats(sync)
    cpu, wall = time.process_time(), time.monotonic()
    produced_before = _jobs(sync)
    await asyncio.sleep(seconds)
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    after = commandstats(sync)
    produced = _jobs(sync) - produced_before
    producer.wait()
    await cancel_and_wait(running)
    delta = {key: after.get(key, 0) - before.get(key, 0) for key in after}
    history_calls = sum(delta.get(key, 0) for key in HISTORY_COMMANDS)
    producer_calls = (
        produced * PRODUCER_COMMANDS_PER_JOB + produced // 50 * PRODUCER_COMMANDS_PER_BATCH
    )
    info_calls = 4  # this process's INFO and GET of the job count
    reader_calls = sum(delta.values()) - producer_calls - info_calls
    return {
        "jobs_per_s": produced / wall,
        "cpu_pct": 100 * cpu / wall,
        "history_per_job": history_calls / max(1, produced),
        "reader_per_job": reader_calls / max(1, produced),
        "spans": float(follower.history.stats["spans"]) if follower.history else 0.0,
        "hmget": delta.get("hmget", 0) / max(1, produced),
    }


def _jobs(sync: Any) -> int:
    return int(sync.get("bench:produced") or 0)


# ---- memory and reading ----------------------------------------------------------------------


async def fill(url: str, queues: int, per_minute: int) -> list[Any]:
    import redis

    from queues.history import prom
    from queues.history import record as record_module
    from queues.history import storage as st
    from queues.history.record import NameRecord, dumps_span
    from queues.history.sketch import Sketch
    from queues.history.summary import dumps_summary
    from queues.reads.keys import QueueRef

    # The queue's record of an hour and a day stored alone, as roll-ups write it (a tree
    # before that wrote spans alone).
    dumps_total = getattr(record_module, "dumps_total", None)
    sync = redis.Redis.from_url(url, decode_responses=True)
    rand = random.Random(2)
    now = int(time.time() * 1000)

    def span(jobs: int) -> dict[str, NameRecord]:
        out = {}
        for name in NAMES:
            runs = [int(rand.lognormvariate(3.5, 0.8)) for _ in range(jobs)]
            waits = [int(rand.lognormvariate(4.5, 1.2)) for _ in range(jobs)]
            out[name] = NameRecord(
                completed=jobs,
                failed=jobs // 50,
                wait=Sketch.of(waits),
                run=Sketch.of(runs),
                slowest=[(str(rand.randint(1, 10**7)), float(r)) for r in sorted(runs)[-3:]],
            )
        return out

    # Per tier: span size, spans whose summary is kept, spans whose sketches are kept, jobs.
    tiers = (
        ("m", st.MINUTE_MS, 1440, st.SKETCH_TTL_S["m"] // 60, per_minute),
        ("h", st.HOUR_MS, 720, st.SKETCH_TTL_S["h"] // 3600, per_minute * 60),
        ("d", st.DAY_MS, 90, 90, per_minute * 1440),
    )
    # A pool of spans per tier, each stored span one of them: the sizes of spans made one by
    # one, in a fraction of the time. At most 5,000 durations a name (sketches saturate).
    pools: dict[str, list[tuple[str, str, str | None]]] = {}
    for tier, _, _, _, jobs in tiers:
        pools[tier] = []
        for _ in range(20):
            made = span(min(jobs, 5000))
            for record in made.values():
                record.completed = jobs
            alone = dumps_total(made) if dumps_total and tier in ("h", "d") else None
            pools[tier].append((dumps_span(made), dumps_summary(made), alone))
    refs = [QueueRef("bull", f"m{index:04d}") for index in range(queues)]
    for ref in refs:
        pipe = sync.pipeline(transaction=False)
        for tier, size, count, sketched, _ in tiers:
            last = now - now % size
            for index, start in enumerate(range(last, last - count * size, -size)):
                blob, summary, alone = pools[tier][rand.randrange(len(pools[tier]))]
                # Each stored span its own text (trailing blanks, still the same JSON), so a
                # read decodes every one, as it would real spans (packed.py keeps them by digest).
                blob += " " * (index + 1)
                pipe.set(st.summary_key(ref, tier, start), summary, ex=st.TIERS[tier][1])
                if index < sketched:
                    pipe.set(st.span_key(ref, tier, start), blob, ex=st.SKETCH_TTL_S[tier])
                    if alone is not None:
                        key = st.total_key(ref, tier, start)
                        pipe.set(key, alone + " " * (index + 1), ex=st.SKETCH_TTL_S[tier])
        pipe.sadd(st.names_key(ref), *NAMES)
        prom.add_to_pipeline(pipe, ref, span(per_minute))
        pipe.execute()
    return refs


def memory(url: str, refs: list[Any]) -> float:
    import redis

    from queues.history.storage import base

    sync, total = redis.Redis.from_url(url, decode_responses=True), 0
    for ref in refs:
        for key in sync.scan_iter(f"{base(ref)}:*", count=5000):
            total += int(sync.memory_usage(key, samples=0) or 0)
    return total / len(refs)


async def read_times(ref: Any, url: str) -> dict[str, tuple[float, ...]]:
    """Per read: the median wall time and the median CPU time of this process (ms) of 20
    reads; the median CPU and wall time of 10 cold reads, each with nothing decoded kept from
    earlier ones (queues/history/kept.py); and the bytes Redis sent for one read (its
    ``total_net_output_bytes``, less the INFO reply that read it, about 1.5 KB)."""
    import redis

    from queues.history import packed, summary
    from queues.history.read import read_history, read_names

    sync = redis.Redis.from_url(url)

    def sent() -> int:
        return int(sync.info("stats")["total_net_output_bytes"])

    out = {}
    for range_name in ("24h", "30d", "90d"):
        for label, read in (("history", read_history), ("names", read_names)):
            colds, cold_walls = [], []
            for _ in range(10):
                packed.forget()
                summary.forget()
                started, cpu = time.perf_counter(), time.process_time()
                await read(ref, range_name)
                colds.append((time.process_time() - cpu) * 1000)
                cold_walls.append((time.perf_counter() - started) * 1000)
            walls, cpus = [], []
            for _ in range(20):
                started, cpu = time.perf_counter(), time.process_time()
                await read(ref, range_name)
                walls.append((time.perf_counter() - started) * 1000)
                cpus.append((time.process_time() - cpu) * 1000)
            before = sent()
            await read(ref, range_name)
            out[f"{label} {range_name}"] = (
                statistics.median(walls),
                statistics.median(cpus),
                statistics.median(colds),
                statistics.median(cold_walls),
                (sent() - before) / 1000,
            )
    return out


async def main(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="history-bench-"))
    proc, url = start_redis(tmp)
    try:
        setup_django(url)
        window = 30 if args.quick else 70
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"# History bench ({when}, {os.cpu_count()} cores)\n")
        print("## Recording at 1,000 jobs/s over 100 queues\n")
        print(
            "| history | jobs/s | reader CPU (% of a core) | history cmds/job"
            " | reader cmds/job | minutes written |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
        for history in () if args.reads else (True, False):
            found = await record_window(url, window if history else 30, history)
            state = "on" if history else "off"
            print(
                f"| {state} | {found['jobs_per_s']:.0f} | {found['cpu_pct']:.1f} "
                f"| {found['history_per_job']:.3f} | {found['reader_per_job']:.3f} "
                f"| {found['spans']:.0f} |"
            )
        import redis

        from queues.redis.clients import close_current

        print("\n## Memory: 24 h of minutes, 30 d of hours, 90 d of days, 5 names a queue\n")
        print(
            "| jobs/min a name | per queue (MB) | per queue and name (KB)"
            " | 1,000 queues x 5 names (GB) |"
        )
        print("| --- | --- | --- | --- |")
        refs = []
        for per_minute in (120,) if args.reads else (12, 120):
            redis.Redis.from_url(url).flushall()
            refs = await fill(url, 3 if args.quick else 10, per_minute)
            per_queue = memory(url, refs)
            print(
                f"| {per_minute} | {per_queue / 1e6:.2f} | {per_queue / len(NAMES) / 1e3:.0f} "
                f"| {per_queue * 1000 / 1e9:.2f} |"
            )
        print("\n## Reading one queue (120 jobs/min a name, 5 names; median of 20, ms)\n")
        print("| read | wall ms | CPU ms | cold read's CPU ms | cold read's wall ms | KB sent |")
        print("| --- | --- | --- | --- | --- | --- |")
        for label, figures in (await read_times(refs[0], url)).items():
            wall, cpu, first, first_wall, sent = figures
            print(f"| {label} | {wall:.1f} | {cpu:.1f} | {first:.1f} | {first_wall:.1f}", end="")
            print(f" | {sent:.0f} |")
        await close_current()
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reads", action="store_true", help="reading alone (and its memory)")
    parser.add_argument("--produce")
    parser.add_argument("--seconds", type=float, default=30)
    parsed = parser.parse_args()
    if parsed.produce:
        produce(parsed.produce, 1000, parsed.seconds)
    else:
        asyncio.run(main(parsed))
