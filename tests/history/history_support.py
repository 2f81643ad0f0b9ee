"""Helpers of the history tests: real Node BullMQ jobs, their own timestamps, and the
recorder fed with the events BullMQ wrote."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from queues.history.recorder import HistoryRecorder
from queues.live.events import parse_entry
from queues.reads.keys import QueueRef
from queues.redis.clients import get_client

# Far enough ahead that every minute recorded so far is closed.
AHEAD_MS = 120_000


def now_ms() -> int:
    return int(time.time() * 1000)


def exact(values: Sequence[float], q: float) -> float:
    """The value at rank q * (n - 1), the lower one: what the sketch estimates."""
    ordered = sorted(values)
    return ordered[math.floor(q * (len(ordered) - 1))]


def within(estimate: float | None, true: float, relative: float = 0.02) -> bool:
    return estimate is not None and abs(estimate - true) <= relative * max(true, 1)


def own_durations(redis_client: Any, queue: str, state: str) -> tuple[list[int], list[int]]:
    """Wait and run times of a finished set's jobs from their hashes, as BullMQ stamped them."""
    waits, runs = [], []
    for job_id in redis_client.zrange(f"bull:{queue}:{state}", 0, -1):
        job = redis_client.hgetall(f"bull:{queue}:{job_id}")
        processed = int(job["processedOn"])
        waits.append(processed - int(job["timestamp"]) - int(job.get("delay", 0)))
        runs.append(int(job["finishedOn"]) - processed)
    return waits, runs


def feed_events(
    recorder: HistoryRecorder, redis_client: Any, ref: QueueRef, after: str = "-"
) -> str:
    """Hand the recorder every event of ``ref``'s stream after ``after``, as the live reader
    does; the last id handed."""
    last = after
    start = after if after == "-" else f"({after}"
    for stream_id, fields in redis_client.xrange(ref.key("events"), start, "+"):
        recorder.take(ref, parse_entry(stream_id, fields))
        last = stream_id
    return last


async def flush_closed(recorder: HistoryRecorder, followed: list[QueueRef]) -> None:
    """Read what was noted now, then write as if every minute so far had closed."""
    await recorder.flush(get_client(), followed, now_ms())
    await recorder.flush(get_client(), followed, now_ms() + AHEAD_MS)
