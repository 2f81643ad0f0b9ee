#!/usr/bin/env python3
"""The overview's history columns at many queues: what *p95 wait* (and *oldest waiting*) cost
Redis and the server for one page of queues.

Run from the repository root with the project's virtualenv::

    ./.venv/bin/python bench/history/columns_bench.py                 # 200 queues, ~30 s
    ./.venv/bin/python bench/history/columns_bench.py --queues 500

Steps: start a throw-away ``redis-server`` on a free port; write, for every queue, the last
two hours of minutes in history's own format (summaries and sketches, 5 job names, 12 jobs a
minute a name, log-normal durations), as the recorder leaves them; then fill the columns of
one page holding every queue (``dashboard.history.overview_columns.add_history_columns``) 21
times. Printed per column set: this process's CPU time of the first fill (what it decodes is
kept for the next ones, queues/history/kept.py; the first set's first fill decodes every
minute), the median of the 20 others' CPU and wall time (ms), and the Redis commands (``INFO
commandstats``, without the INFO itself) of one fill.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from history_bench import NAMES, commandstats, setup_django, start_redis

REPEATS = 20


def blanks(number: int) -> str:
    """Eight blanks (space, tab, CR, LF) that spell ``number``: JSON reads past them."""
    return "".join(" \t\r\n"[(number >> (2 * digit)) & 3] for digit in range(8))


def write_two_hours(url: str, refs: list[Any], seed: int, *, mark_recorded: bool = False) -> None:
    """Two hours of minutes of each queue in ``refs``, summaries and sketches, as the recorder
    leaves them; ``mark_recorded``: and the newest minute noted as recorded."""
    import redis

    from queues.history import storage as st
    from queues.history.record import NameRecord, dumps_span
    from queues.history.sketch import Sketch
    from queues.history.summary import dumps_summary

    rand = random.Random(seed)
    pool = []
    for _ in range(20):
        span = {}
        for name in NAMES:
            runs = [int(rand.lognormvariate(3.5, 0.8)) for _ in range(12)]
            waits = [int(rand.lognormvariate(4.5, 1.2)) for _ in range(12)]
            span[name] = NameRecord(completed=12, wait=Sketch.of(waits), run=Sketch.of(runs))
        pool.append((dumps_span(span), dumps_summary(span)))
    sync = redis.Redis.from_url(url)
    now = int(time.time() * 1000)
    last = now - now % st.MINUTE_MS - st.MINUTE_MS  # the newest closed minute
    for index, ref in enumerate(refs):
        pipe = sync.pipeline(transaction=False)
        for minute, start in enumerate(range(last, last - 120 * st.MINUTE_MS, -st.MINUTE_MS)):
            blob, summary = pool[rand.randrange(len(pool))]
            # Each stored text its own (trailing blanks, the same JSON), as real minutes are:
            # a first read decodes every one (queues/history/kept.py keeps them by digest).
            blank = blanks(index * 120 + minute)
            pipe.set(st.span_key(ref, "m", start), blob + blank, ex=st.SKETCH_TTL_S["m"])
            pipe.set(st.summary_key(ref, "m", start), summary + blank, ex=st.TIERS["m"][1])
        if mark_recorded:
            pipe.set(st.last_key(ref), last)
        pipe.execute()


def fill(url: str, queues: int) -> list[dict[str, Any]]:
    """Every queue's last two hours of minutes, summaries and sketches; the queues' dicts as
    the overview hands them to the columns."""
    from queues.reads.keys import QueueRef
    from queues.redis.connections import default_name

    refs = [QueueRef("bull", f"q{index:04d}") for index in range(queues)]
    write_two_hours(url, refs, seed=3)
    return [{"prefix": "bull", "name": ref.name, "connection": default_name()} for ref in refs]


async def measure(url: str, listed: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    import redis

    from dashboard.history.overview_columns import add_history_columns

    sync = redis.Redis.from_url(url, decode_responses=True)
    cpus, walls, commands = [], [], []
    for _ in range(REPEATS + 1):
        queues = [dict(q) for q in listed]
        before = commandstats(sync)
        cpu, wall = time.process_time(), time.perf_counter()
        await add_history_columns(queues, columns)
        cpus.append((time.process_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
        after = commandstats(sync)
        commands.append(sum(after[k] - before.get(k, 0) for k in after if k != "info"))
    first = cpus.pop(0)
    walls.pop(0)
    shown = sum(1 for q in queues if q["history"]["wait_p95"]["value"] is not None)
    return (
        f"| {','.join(columns)} | {len(listed)} | {first:.1f} | {statistics.median(cpus):.1f} "
        f"| {statistics.median(walls):.1f} | {statistics.median(commands):.0f} | {shown} |"
    )


async def main(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="columns-bench-"))
    proc, url = start_redis(tmp)
    try:
        setup_django(url)
        listed = fill(url, args.queues)
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"# Overview history columns ({when}, median of {REPEATS})\n")
        print(
            "| columns | queues | first fill's CPU ms | CPU ms | wall ms | Redis commands"
            " | p95 wait shown |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for columns in (("wait_p95",), ("wait_p95", "oldest")):
            print(await measure(url, listed, columns))
        from queues.redis.clients import close_current

        await close_current()
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--queues", type=int, default=200)
    asyncio.run(main(parser.parse_args()))
