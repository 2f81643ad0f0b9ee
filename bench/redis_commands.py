"""Redis commands per request: ``INFO commandstats`` around sequential requests, with what Redis
runs while idle subtracted."""

from __future__ import annotations

import http.client
import time
from dataclasses import dataclass

import redis as redis_py


def command_calls(r: redis_py.Redis) -> dict[str, int]:
    stats = r.info("commandstats")
    calls = {}
    for key, val in stats.items():
        name = key[len("cmdstat_") :] if key.startswith("cmdstat_") else key
        calls[name] = int(val["calls"]) if isinstance(val, dict) else 0
    return calls


def calls_diff(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    diff = {}
    for name, n in after.items():
        d = n - before.get(name, 0)
        if d:
            diff[name] = d
    # The first INFO shows up in the second one's figures.
    if diff.get("info"):
        diff["info"] -= 1
        if not diff["info"]:
            del diff["info"]
    return diff


@dataclass
class CmdResult:
    per_request: float
    breakdown: dict[str, float]
    idle_per_request: float
    bytes_per_response: int
    status_errors: int


def measure_commands(r: redis_py.Redis, port: int, path: str, samples: int) -> CmdResult:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        # One request outside the window so the keep-alive connection is open.
        conn.request("GET", path)
        conn.getresponse().read()
        before = command_calls(r)
        t0 = time.monotonic()
        size = 0
        bad = 0
        for _ in range(samples):
            conn.request("GET", path)
            resp = conn.getresponse()
            body = resp.read()
            size += len(body)
            if resp.status != 200:
                bad += 1
        elapsed = time.monotonic() - t0
        after = command_calls(r)
    finally:
        conn.close()
    active = calls_diff(before, after)
    # Whatever Redis ran with nobody asking (background tasks of either
    # server) over the same time, subtracted.
    idle_before = command_calls(r)
    time.sleep(min(elapsed, 10.0))
    idle = calls_diff(idle_before, command_calls(r))
    idle_scale = elapsed / min(elapsed, 10.0) if elapsed > 0 else 1.0
    idle_total = sum(idle.values()) * idle_scale
    total = sum(active.values()) - idle_total
    breakdown = {}
    for name, n in active.items():
        v = (n - idle.get(name, 0) * idle_scale) / samples
        if abs(v) >= 0.005:
            breakdown[name] = round(v, 2)
    return CmdResult(
        per_request=max(0.0, total / samples),
        breakdown=dict(sorted(breakdown.items(), key=lambda kv: -kv[1])),
        idle_per_request=idle_total / samples,
        bytes_per_response=size // samples,
        status_errors=bad,
    )
