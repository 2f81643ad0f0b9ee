"""Completed and failed jobs per minute for a queue, over the last hour or day: the current
minute and the 59 (or 1,439) before it, the window every "last hour" figure uses
(:func:`window_start`).

From BullMQ's own metrics when workers run with the ``metrics`` option; otherwise from
Bullpen's own samples of the event streams (queues/throughput/sampler.py). A minute the samples
do not cover (coverage.py: before the live reader started, while it did not read, the minute
still open) is unknown: its counts are None and the totals leave it out. Asked with
``failed_set``, the series also says how many jobs the failed set holds that failed in those
minutes, counted as the failed-in-the-last-hour alert counts them (its ``ZCOUNT`` by
finishedOn): the page's two failed figures then add up. BullMQ keeps, per kind
(``<queue>:metrics:completed`` / ``failed``), a hash and a list. The list holds one count per
closed minute, newest first; a minute closes only when a job of that kind finishes in a later
minute, so its newest point is the minute before the hash's ``prevTS``. The hash holds the open
minute: the minute of ``prevTS``, with ``count - prevCount`` jobs so far. Each kind closes its
minutes on its own clock, so each list is placed by its own hash.
"""

from __future__ import annotations

import json
import time
from typing import Any

from queues.reads.keys import QueueRef
from queues.redis import per_connection
from queues.redis.errors import translate_redis_errors
from queues.redis.fastpipe import Command
from queues.throughput.coverage import counted, sampled_key, stretches
from queues.throughput.sampler import MINUTE_MS, stats_key

WINDOWS = {"hour": 60, "day": 1440}
_META = ("prevTS", "count", "prevCount")


def window_start(now_ms: int, minutes: int) -> int:
    """The first millisecond of a window of ``minutes`` whole minutes ending with the current
    one: what the throughput series, the failed-in-the-last-hour alert and the metrics count."""
    return now_ms - now_ms % MINUTE_MS - MINUTE_MS * (minutes - 1)


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
        ("HMGET", ref.key("metrics:completed"), *_META),
        ("LRANGE", ref.key("metrics:completed:data"), 0, minutes - 1),
        ("HMGET", ref.key("metrics:failed"), *_META),
        ("LRANGE", ref.key("metrics:failed:data"), 0, minutes - 1),
        ("LRANGE", stats_key(ref), 0, minutes - 1),
    ]


def bullmq_minutes(meta: Any, data: Any) -> dict[int, int]:
    """Jobs per minute start (ms) of one kind from BullMQ's metrics hash (``prevTS``, ``count``,
    ``prevCount``) and list: the open minute included. Empty when BullMQ recorded none."""
    fields = meta if isinstance(meta, list) and len(meta) == len(_META) else [None] * 3
    prev_ts, count, prev_count = _ints(fields)
    if prev_ts <= 0:
        return {}
    open_minute = prev_ts - prev_ts % MINUTE_MS
    minutes = {open_minute: max(0, count - prev_count)}
    for index, closed in enumerate(_ints(data if isinstance(data, list) else [])):
        minute = open_minute - (index + 1) * MINUTE_MS
        minutes[minute] = minutes.get(minute, 0) + closed
    return minutes


async def series(ref: QueueRef, window: str = "hour", failed_set: bool = False) -> dict[str, Any]:
    """:func:`series_of` one queue; with ``failed_set``, also ``failedUnsampled``: the jobs
    the failed set holds that failed in the minutes not sampled (None: every minute was, or
    the set could not be read), one more round trip when there are such minutes."""
    found = (await series_of([ref], window))[ref]
    if failed_set:
        found["failedUnsampled"] = await _failed_unsampled(ref, found["points"])
    return found


async def series_of(refs: list[QueueRef], window: str = "hour") -> dict[QueueRef, dict[str, Any]]:
    """:func:`series` of each queue, in one round trip (the overview's sparklines); the
    minutes sampled are read once a connection, whatever the number of queues."""
    minutes = WINDOWS.get(window, 60)
    commands = [command for ref in refs for command in _commands(ref, minutes)]
    owners = [ref for ref in refs for _ in _commands(ref, minutes)]
    # One queue of each connection stands for it: the key is the connection's.
    speakers = list({ref.connection: ref for ref in refs}.values())
    commands += [("HGETALL", sampled_key(ref.connection)) for ref in speakers]
    async with translate_redis_errors():
        replies = await per_connection.execute_for([*owners, *speakers], commands)
    covered = {
        ref.connection: reply
        for ref, reply in zip(speakers, replies[len(owners) :], strict=True)
        if not isinstance(reply, Exception)
    }
    now = int(time.time() * 1000)
    found = {}
    step = len(_commands(QueueRef("", ""), 1))
    for index, ref in enumerate(refs):
        completed_meta, completed_data, failed_meta, failed_data, own = (
            reply if not isinstance(reply, Exception) else None
            for reply in replies[step * index : step * index + step]
        )
        bullmq = (
            bullmq_minutes(completed_meta, completed_data),
            bullmq_minutes(failed_meta, failed_data),
        )
        samples = (own, covered.get(ref.connection))
        found[ref] = _series(ref, window, minutes, now, bullmq, samples)
    return found


def _series(
    ref: QueueRef,
    window: str,
    minutes: int,
    now: int,
    bullmq: tuple[dict[int, int], dict[int, int]],
    samples: tuple[Any, Any],
) -> dict[str, Any]:
    first = window_start(now, minutes)
    starts = [first + MINUTE_MS * i for i in range(minutes)]
    completed = dict.fromkeys(starts, 0)
    failed = dict.fromkeys(starts, 0)
    if bullmq[0] or bullmq[1]:
        source = "bullmq-metrics"
        known = set(starts)
        for per_minute, into in zip(bullmq, (completed, failed), strict=True):
            for minute, count in per_minute.items():
                if minute in into:
                    into[minute] += count
    else:
        source = "bullpen-samples"
        own, covered = samples
        spans = stretches(covered)
        known = {minute for minute in starts if counted(minute, spans)}
        for raw in own or ():
            try:
                minute, done, broke = json.loads(raw)
            except (ValueError, TypeError):
                continue
            if minute in completed:
                completed[minute] += int(done)
                failed[minute] += int(broke)
    points = [
        {"t": m, "completed": completed[m], "failed": failed[m]}
        if m in known
        else {"t": m, "completed": None, "failed": None}
        for m in starts
    ]
    total_completed = sum(completed[m] for m in known)
    total_failed = sum(failed[m] for m in known)
    finished = total_completed + total_failed
    return {
        "queue": ref.slug,
        "window": window,
        "source": source,
        "points": points,
        "completed": total_completed,
        "failed": total_failed,
        "failureRate": round(total_failed / finished, 4) if finished else 0.0,
        # Minutes not sampled; the first one sampled when the window's start was not (the
        # totals count from there).
        "unsampled": minutes - len(known),
        "sampledFrom": min(known) if known and first not in known else None,
    }


async def _failed_unsampled(ref: QueueRef, points: list[dict[str, Any]]) -> int | None:
    """Jobs the failed set holds that failed (by finishedOn) in the minutes of ``points`` not
    sampled: one ``ZCOUNT`` a run of them; a run reaching the window's end counts on to
    ``+inf``, as the alert does."""
    runs: list[tuple[int, int | None]] = []
    for index, point in enumerate(points):
        if point["failed"] is not None:
            continue
        end = points[index + 1]["t"] if index + 1 < len(points) else None
        if runs and runs[-1][1] == point["t"]:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((point["t"], end))
    if not runs:
        return None
    key = ref.key("failed")
    commands: list[Command] = [
        ("ZCOUNT", key, start, "+inf" if end is None else f"({end}") for start, end in runs
    ]
    async with translate_redis_errors():
        replies = await per_connection.execute_for([ref] * len(runs), commands)
    counts = [reply for reply in replies if isinstance(reply, int)]
    return sum(counts) if len(counts) == len(replies) else None
