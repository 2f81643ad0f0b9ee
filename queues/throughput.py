"""Completed and failed jobs per minute for a queue, over the last hour or day.

From BullMQ's own metrics lists (``<queue>:metrics:completed:data`` / ``failed:data``, one count
per minute, newest first) when workers run with the ``metrics`` option; otherwise from Bullpen's
own samples of the event streams (queues/sampler.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

from queues import per_connection
from queues.fastpipe import Command
from queues.keys import QueueRef
from queues.redis_errors import translate_redis_errors
from queues.sampler import MINUTE_MS, stats_key

WINDOWS = {"hour": 60, "day": 1440}


def _ints(values: list[Any]) -> list[int]:
    out = []
    for value in values:
        try:
            out.append(int(value))
        except (TypeError, ValueError):
            out.append(0)
    return out


def _commands(ref: QueueRef, minutes: int) -> list[Command]:
    return [
        ("HGET", ref.key("metrics:completed"), "prevTS"),
        ("LRANGE", ref.key("metrics:completed:data"), 0, minutes - 1),
        ("LRANGE", ref.key("metrics:failed:data"), 0, minutes - 1),
        ("LRANGE", stats_key(ref), 0, minutes - 1),
    ]


async def series(ref: QueueRef, window: str = "hour") -> dict[str, Any]:
    return (await series_of([ref], window))[ref]


async def series_of(refs: list[QueueRef], window: str = "hour") -> dict[QueueRef, dict[str, Any]]:
    """:func:`series` of each queue, in one round trip (the overview's sparklines)."""
    minutes = WINDOWS.get(window, 60)
    commands = [command for ref in refs for command in _commands(ref, minutes)]
    async with translate_redis_errors():
        owners = [ref for ref in refs for _ in _commands(ref, minutes)]
        replies = await per_connection.execute_for(owners, commands)
    now = int(time.time() * 1000)
    found = {}
    for index, ref in enumerate(refs):
        prev_ts, completed_data, failed_data, own = (
            reply if not isinstance(reply, Exception) else None
            for reply in replies[4 * index : 4 * index + 4]
        )
        found[ref] = _series(ref, window, minutes, now, prev_ts, completed_data, failed_data, own)
    return found


def _series(
    ref: QueueRef,
    window: str,
    minutes: int,
    now: int,
    prev_ts: Any,
    completed_data: Any,
    failed_data: Any,
    own: Any,
) -> dict[str, Any]:
    current = now - now % MINUTE_MS
    starts = [current - MINUTE_MS * (minutes - 1 - i) for i in range(minutes)]
    completed = dict.fromkeys(starts, 0)
    failed = dict.fromkeys(starts, 0)
    if completed_data or failed_data:
        source = "bullmq-metrics"
        # Newest first; the newest point is the minute of prevTS (the last one BullMQ closed).
        newest = current - MINUTE_MS
        if prev_ts and str(prev_ts).isdigit():
            newest = int(prev_ts) - int(prev_ts) % MINUTE_MS
        for data, into in ((completed_data, completed), (failed_data, failed)):
            for index, count in enumerate(_ints(data)):
                minute = newest - index * MINUTE_MS
                if minute in into:
                    into[minute] += count
    else:
        source = "bullpen-samples"
        for raw in own or ():
            try:
                minute, done, broke = json.loads(raw)
            except (ValueError, TypeError):
                continue
            if minute in completed:
                completed[minute] += int(done)
                failed[minute] += int(broke)
    points = [{"t": m, "completed": completed[m], "failed": failed[m]} for m in starts]
    total_completed = sum(p["completed"] for p in points)
    total_failed = sum(p["failed"] for p in points)
    finished = total_completed + total_failed
    return {
        "queue": ref.slug,
        "window": window,
        "source": source,
        "points": points,
        "completed": total_completed,
        "failed": total_failed,
        "failureRate": round(total_failed / finished, 4) if finished else 0.0,
    }
