"""What a reader that starts (or takes the lease over) records for the time nobody read the
event streams: every minute after the newest one written (``...:last``; the last 24 hours when
there is none) is filled from the jobs BullMQ still keeps in its completed and failed sets
(scored by their finish time), and, for the jobs those sets no longer hold
(``removeOnComplete``), counted from BullMQ's metrics lists when its workers write them.

Each finished job is then recorded as if its event had come; the recorder adds a job once per
(id, finish time), so one whose event also comes is not counted twice, and a minute another
reader wrote meanwhile is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis

from queues.history.measure import Noted
from queues.history.storage import DAY_MS, MINUTE_MS, last_key
from queues.reads.keys import QueueRef
from queues.redis import fastpipe
from queues.throughput.rates import bullmq_minutes

# Newest finished jobs per queue and state read back at most: a bound on the reader's start.
LIMIT = 20_000
FINISHED_SETS = ("completed", "failed")


@dataclass
class Found:
    noted: list[tuple[QueueRef, Noted]] = field(default_factory=list)
    # The newest minute each queue had written, where its back-fill starts.
    last_written: dict[QueueRef, int] = field(default_factory=dict)
    # Per queue and closed minute: (completed, failed) as BullMQ's metrics counted them.
    counts_only: dict[QueueRef, dict[int, tuple[int, int]]] = field(default_factory=dict)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


async def gather(redis: aioredis.Redis, refs: list[QueueRef], now_ms: int) -> Found:
    found = Found()
    if not refs:
        return found
    lasts = await fastpipe.execute(redis, [("GET", last_key(ref)) for ref in refs])
    open_minute = now_ms - now_ms % MINUTE_MS
    since: dict[QueueRef, int] = {}
    for ref, raw in zip(refs, lasts, strict=True):
        last = _int(raw)
        if last is not None:
            found.last_written[ref] = last
            since[ref] = last + MINUTE_MS
        else:
            start = now_ms - DAY_MS
            since[ref] = start - start % MINUTE_MS + MINUTE_MS
    commands: list[fastpipe.Command] = []
    for ref in refs:
        for state in FINISHED_SETS:
            commands.append(
                (
                    "ZREVRANGEBYSCORE",
                    ref.key(state),
                    "+inf",
                    since[ref],
                    "WITHSCORES",
                    "LIMIT",
                    0,
                    LIMIT + 1,
                )
            )
        for state in FINISHED_SETS:
            commands.append(("HMGET", ref.key(f"metrics:{state}"), "prevTS", "count", "prevCount"))
            commands.append(("LRANGE", ref.key(f"metrics:{state}:data"), 0, 1439))
    replies = await fastpipe.execute(redis, commands)
    for index, ref in enumerate(refs):
        completed, failed, c_meta, c_data, f_meta, f_data = replies[6 * index : 6 * index + 6]
        start = since[ref]
        jobs: list[tuple[str, str, int]] = []
        for state, reply in (("completed", completed), ("failed", failed)):
            pairs = _pairs(reply)
            if len(pairs) > LIMIT:
                # More than LIMIT: the minute of the oldest one read is not whole.
                pairs = pairs[:LIMIT]
                oldest = min(score for _, score in pairs)
                start = max(start, oldest - oldest % MINUTE_MS + MINUTE_MS)
            jobs.extend((state, job_id, score) for job_id, score in pairs)
        for state, job_id, score in jobs:
            if score >= start:
                found.noted.append((ref, Noted(state, job_id, score, finished_on=score)))
        counted = _metrics_minutes(c_meta, c_data, f_meta, f_data, start, open_minute)
        if counted:
            found.counts_only[ref] = counted
    return found


def _pairs(reply: Any) -> list[tuple[str, int]]:
    """(member, score) pairs of a WITHSCORES reply, flat (RESP2) or paired (RESP3)."""
    if not isinstance(reply, list):
        return []
    if reply and isinstance(reply[0], (list, tuple)):
        items = [(str(pair[0]), pair[1]) for pair in reply]
    else:
        items = list(zip(map(str, reply[0::2]), reply[1::2], strict=True))
    out = []
    for member, score in items:
        value = _int(float(score)) if score is not None else None
        if value is not None:
            out.append((member, value))
    return out


def _metrics_minutes(
    c_meta: Any, c_data: Any, f_meta: Any, f_data: Any, start: int, open_minute: int
) -> dict[int, tuple[int, int]]:
    completed = bullmq_minutes(c_meta, c_data)
    failed = bullmq_minutes(f_meta, f_data)
    minutes = {}
    for minute in set(completed) | set(failed):
        if start <= minute < open_minute:
            counts = (completed.get(minute, 0), failed.get(minute, 0))
            if counts != (0, 0):
                minutes[minute] = counts
    return minutes
