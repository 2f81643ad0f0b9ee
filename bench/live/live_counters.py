"""Counters read around a window: Redis's ``INFO commandstats`` and the load generator's JSON
lines, and the wait until the load's retention is steady."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import redis as redis_py
from live_settings import log


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
