"""Bull Board's side: tabs polling its overview route, and the Redis commands one poll costs."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

import redis as redis_py
from live_counters import calls_between, redis_sample
from live_settings import BULLBOARD_INTERVAL, BULLBOARD_POLL
from servers import http_get  # bench/ is not a package: on sys.path from the driver


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
