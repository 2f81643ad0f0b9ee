"""The alert rules that read more than counts: history over a window (failure rate, p95 run
and wait times, stalls in the last hour), the oldest waiting job, workers and schedulers.

Each is read only for the queues that turn it on (names.py; all are off by default). A rule
whose reading failed (a refused ``CLIENT LIST``, a queue whose history was never recorded, a
read Redis did not answer) is *undecided*: the sender keeps its state as it was, so that an
outage neither resolves a firing alert nor fires one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from redis.exceptions import RedisError

from queues.alerts import minutes, oldest_kept
from queues.alerts.decided import Mark, recall, remember
from queues.alerts.names import (
    RATE_MIN_JOBS,
    RATE_WINDOW_MOST_S,
    RATE_WINDOW_S,
    WINDOW_RULES,
)
from queues.alerts.oldest_kept import Still
from queues.alerts.schedulers import overdue, read_schedulers
from queues.alerts.thresholds import LAST_HOUR_S, Alert, Limits, thresholds
from queues.config.problem import is_number
from queues.config.settings import get_config
from queues.errors import BullpenError
from queues.history.packed import PackedRecord, added, quantiles_of, slid
from queues.history.read import oldest_waiting_ms
from queues.history.record import NameRecord
from queues.history.spans import Ask, mget_each
from queues.history.storage import MINUTE_MS, last_key
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef
from queues.reads.workers import list_workers
from queues.redis.errors import translate_redis_errors

_TROUBLE = (BullpenError, RedisError, OSError)

# When each queue was first seen with jobs waiting and no worker (per process: a process that
# takes the lease over starts counting again).
_unattended_since: dict[QueueRef, float] = {}
# What this module keeps per queue between passes: at most this many, then it starts again.
_JUDGED_KEPT = 200_000


@dataclass
class RuleReading:
    """The new rules' alerts per queue, and the rules that could not be evaluated."""

    alerts: dict[QueueRef, list[Alert]] = field(default_factory=dict)
    undecided: dict[QueueRef, set[str]] = field(default_factory=dict)

    def fire(self, ref: QueueRef, alert: Alert) -> None:
        self.alerts.setdefault(ref, []).append(alert)

    def cannot(self, ref: QueueRef, *rules: str) -> None:
        self.undecided.setdefault(ref, set()).update(rules)


@dataclass(frozen=True)
class Measure:
    """How the window rules measure: ``ALERTS["RATE_WINDOW"]`` and ``["RATE_MIN_JOBS"]``."""

    window_s: int = RATE_WINDOW_S
    min_jobs: int = RATE_MIN_JOBS

    @classmethod
    def from_config(cls) -> Measure:
        """A value of the wrong kind (reported by ``manage.py check``) reads as its default."""
        given = get_config().get("ALERTS")
        keys: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        window: Any = keys.get("RATE_WINDOW")
        least: Any = keys.get("RATE_MIN_JOBS")
        good_window = is_number(window) and 60 <= window <= RATE_WINDOW_MOST_S
        good_least = is_number(least) and least >= 0
        return cls(
            int(window) if good_window else cls.window_s,
            int(least) if good_least else cls.min_jobs,
        )


def _on(limits: Mapping[str, float | None], rule: str) -> float | None:
    limit = limits.get(rule)
    return limit if is_number(limit) else None


def minute_starts(seconds: int, now_ms: int) -> list[int]:
    """The minute spans covering the last ``seconds``, the open minute last."""
    last = now_ms - now_ms % MINUTE_MS
    count = max(1, -(-seconds * 1000 // MINUTE_MS))
    return [last - (count - 1 - index) * MINUTE_MS for index in range(count)]


def window_values(record: NameRecord, measure: Measure) -> dict[str, float | None]:
    """Each window rule's value over ``record``; None when there is nothing to judge by (no
    job measured, or fewer than RATE_MIN_JOBS finished for the rate): then it does not fire."""
    finished = record.completed + record.failed
    run95 = record.run.quantiles((0.95,))[0]
    wait95 = record.wait.quantiles((0.95,))[0]
    enough = finished and finished >= measure.min_jobs
    return {
        "failure_rate_percent": round(100.0 * record.failed / finished, 1) if enough else None,
        "run_p95_ms": None if run95 is None else round(run95),
        "wait_p95_ms": None if wait95 is None else round(wait95),
    }


def packed_window_values(record: PackedRecord, measure: Measure) -> dict[str, float | None]:
    """:func:`window_values` of a packed record (queues/history/packed.py), not unpacked: the
    same values, without a Python step per bucket."""
    completed, failed = record.counts[:2]
    finished = completed + failed
    run95 = quantiles_of(record.run, (0.95,))[0]
    wait95 = quantiles_of(record.wait, (0.95,))[0]
    enough = finished and finished >= measure.min_jobs
    return {
        "failure_rate_percent": round(100.0 * failed / finished, 1) if enough else None,
        "run_p95_ms": None if run95 is None else round(run95),
        "wait_p95_ms": None if wait95 is None else round(wait95),
    }


@dataclass(frozen=True)
class _Wanted:
    """A queue's history rules that are on."""

    window: list[str]
    stalled_limit: float | None

    @cached_property
    def rules(self) -> list[str]:
        stalled = ["stalled_last_hour"] if self.stalled_limit is not None else []
        return self.window + stalled


# _history_wanted's answers by the thresholds they were given (thresholds.py keeps one object
# per queue while the settings stand): a pass over thousands of queues asks again each time.
_wanted_of: dict[int, tuple[Mapping[str, float | None], _Wanted | None]] = {}


def _history_wanted(limits: Mapping[str, float | None]) -> _Wanted | None:
    kept = _wanted_of.get(id(limits))
    if kept is not None and kept[0] is limits:
        return kept[1]
    if len(_wanted_of) >= _JUDGED_KEPT:
        _wanted_of.clear()
    found = _wanted_of[id(limits)] = (limits, _wanted(limits))
    return found[1]


def _wanted(limits: Mapping[str, float | None]) -> _Wanted | None:
    wanted = _Wanted(
        [rule for rule in WINDOW_RULES if _on(limits, rule) is not None],
        _on(limits, "stalled_last_hour"),
    )
    return wanted if wanted.rules else None


async def _histories(
    found: Sequence[QueueSummary],
    limits: Mapping[QueueRef, Mapping[str, float | None]],
    measure: Measure,
    now_ms: int,
    reading: RuleReading,
) -> None:
    """The window and stall rules of every queue that turns one on, from its minutes' totals:
    every queue in one round trip per connection for when each was last recorded, one more
    for the minutes of those recorded not kept from the passes before (packed,
    queues/history/packed.py; kept by minutes.py)."""
    wanted = {s.ref: w for s in found if (w := _history_wanted(limits[s.ref])) is not None}
    if not wanted:
        return
    refs = list(wanted)
    try:
        async with translate_redis_errors():
            lasts = await mget_each(refs, [[last_key(ref)] for ref in refs])
            recorded: dict[QueueRef, int | None] = {}
            window: dict[QueueRef, list[int]] = {}  # minutes judged by their sketches
            # The last hour's other minutes, for stalls: their summaries' counts (small); both
            # read only where minutes.py keeps none.
            hour: dict[QueueRef, list[int]] = {}
            window_minutes = minute_starts(measure.window_s, now_ms)
            hour_minutes = set(minute_starts(LAST_HOUR_S, now_ms))
            hour_alone = sorted(hour_minutes - set(window_minutes))
            marks: dict[QueueRef, Mark] = {}
            for ref, last in zip(refs, lasts, strict=True):
                if isinstance(last, BaseException) or last[0] is None:
                    # Unreadable, or never recorded (or not for 25 hours): nothing to judge by.
                    reading.cannot(ref, *wanted[ref].rules)
                    recorded[ref] = None
                    continue
                recorded[ref] = _int(last[0])
                mark = marks[ref] = Mark(last[0], now_ms // MINUTE_MS, measure, limits[ref])
                told = recall(ref, mark)
                if told is not None:
                    for alert in told:
                        reading.fire(ref, alert)
                    continue
                window[ref] = window_minutes if wanted[ref].window else []
                if wanted[ref].stalled_limit is not None:
                    hour[ref] = hour_alone if window[ref] else sorted(hour_minutes)
            sketched, stalls = await minutes.KEPT.read(
                recorded, window, hour, minutes.usable(measure.window_s), now_ms
            )
    except _TROUBLE:
        for ref in refs:
            reading.cannot(ref, *wanted[ref].rules)
        return
    for ref in window:
        spans, more = sketched[ref], stalls.get(ref, 0)
        if isinstance(spans, BaseException) or isinstance(more, BaseException):
            reading.cannot(ref, *wanted[ref].rules)
        else:
            judged = RuleReading()
            _judge(
                ref, spans, limits[ref], wanted[ref], measure, now_ms, judged, stalled_before=more
            )
            for alert in judged.alerts.get(ref, []):
                reading.fire(ref, alert)
            remember(ref, marks[ref], judged.alerts.get(ref, []))


def _int(raw: Any) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


# Per queue, the window's records of its last judgement, the values they gave and their sum:
# an unchanged window (the same records, kept decoded by queues/history/packed.py, and frozen)
# gives the same values without adding up its sketches again; one moved on a minute is added
# up from the sum before (packed.slid).
_judged: dict[
    QueueRef, tuple[list[PackedRecord], Measure, dict[str, float | None], PackedRecord]
] = {}


def _window_values(
    ref: QueueRef, records: list[PackedRecord], measure: Measure
) -> dict[str, float | None]:
    last = _judged.get(ref)
    if (
        last is not None
        and last[1] == measure
        and len(last[0]) == len(records)
        and all(a is b for a, b in zip(last[0], records, strict=True))
    ):
        return last[2]
    total = added(records) if last is None else slid(last[0], last[3], records)
    values = packed_window_values(total, measure)
    if len(_judged) >= _JUDGED_KEPT:
        _judged.clear()
    _judged[ref] = (records, measure, values, total)
    return values


def _judge(
    ref: QueueRef,
    spans: Mapping[Ask, PackedRecord],
    limits: Mapping[str, float | None],
    wanted: _Wanted,
    measure: Measure,
    now_ms: int,
    reading: RuleReading,
    *,
    stalled_before: int = 0,
) -> None:
    """``spans``: the minutes read; ``stalled_before``: the stalls of the last hour's minutes
    not among them (added up from their summaries)."""
    window_from = minute_starts(measure.window_s, now_ms)[0]
    hour_from = minute_starts(LAST_HOUR_S, now_ms)[0]
    window = [r for (_, start), r in spans.items() if start >= window_from]
    stalled = stalled_before + sum(
        r.counts[3] for (_, start), r in spans.items() if start >= hour_from
    )
    values = _window_values(ref, window, measure)
    for rule in wanted.window:
        value = values[rule]
        limit = limits[rule]
        if value is not None and limit is not None and value > limit:
            reading.fire(ref, Alert(rule, value, limit, window_s=measure.window_s))
    stalled_limit = wanted.stalled_limit
    if stalled_limit is not None and stalled > stalled_limit:
        reading.fire(ref, Alert("stalled_last_hour", stalled, stalled_limit, window_s=LAST_HOUR_S))


async def _oldest(
    found: Sequence[QueueSummary],
    limits: Mapping[QueueRef, Mapping[str, float | None]],
    now_ms: int,
    reading: RuleReading,
    still: Still | None = None,
) -> None:
    """``still``: the reader's token of a queue, which keeps its oldest job (oldest_kept.py)."""
    # A queue whose wait list was empty when this pass counted it has no oldest job to read.
    refs = [
        s.ref
        for s in found
        if _on(limits[s.ref], "oldest_waiting_seconds") is not None and s.counts["waiting"]
    ]
    if not refs:
        return
    tokens = {ref: still(ref) for ref in refs} if still is not None else {}
    known = {ref: oldest_kept.known_age(ref, tokens.get(ref), now_ms) for ref in refs}
    ages: dict[QueueRef, int | None] = {ref: age for ref, age in known.items() if age is not None}
    unread = [ref for ref in refs if ref not in ages]
    try:
        read = await oldest_waiting_ms(unread, now_ms)
    except _TROUBLE:
        for ref in unread:
            reading.cannot(ref, "oldest_waiting_seconds")
        unread, read = [], {}
    for ref in unread:
        ages[ref] = read.get(ref)
        oldest_kept.keep(ref, tokens.get(ref), ages[ref], now_ms)
    for ref in ages:
        age, limit = ages.get(ref), limits[ref]["oldest_waiting_seconds"]
        if age is not None and limit is not None and age / 1000 > limit:
            reading.fire(ref, Alert("oldest_waiting_seconds", age // 1000, limit))


async def _workers(
    found: Sequence[QueueSummary],
    limits: Mapping[QueueRef, Mapping[str, float | None]],
    reading: RuleReading,
) -> None:
    on = [s for s in found if _on(limits[s.ref], "no_workers_seconds") is not None]
    for gone in set(_unattended_since) - {s.ref for s in on}:
        del _unattended_since[gone]
    if not on:
        return
    try:
        connected = {w.queue for w in await list_workers([s.ref for s in on])}
    except _TROUBLE:  # ClientListRefused among them: workers cannot be known
        for summary in on:
            reading.cannot(summary.ref, "no_workers_seconds")
        return
    now = time.monotonic()
    for summary in on:
        ref = summary.ref
        if summary.counts["waiting"] == 0 or ref.slug in connected:
            _unattended_since.pop(ref, None)
            continue
        since = _unattended_since.setdefault(ref, now)
        limit = limits[ref]["no_workers_seconds"]
        if limit is not None and now - since > limit:
            reading.fire(ref, Alert("no_workers_seconds", int(now - since), limit))


async def _schedulers(
    found: Sequence[QueueSummary],
    limits: Mapping[QueueRef, Mapping[str, float | None]],
    now_ms: int,
    reading: RuleReading,
) -> None:
    refs = [s.ref for s in found if _on(limits[s.ref], "scheduler_overdue_seconds") is not None]
    firing, undecided = overdue(refs, limits, await read_schedulers(refs, now_ms), now_ms)
    for ref, alert in firing.items():
        reading.fire(ref, alert)
    for ref in undecided:
        reading.cannot(ref, "scheduler_overdue_seconds")


async def read_rules(
    found: Sequence[QueueSummary],
    now_ms: int | None = None,
    *,
    workers: bool = True,
    limits: Limits | None = None,
    still: Still | None = None,
) -> RuleReading:
    """The new rules on every queue in ``found`` (its summaries of this pass). ``workers``
    False leaves no_workers_seconds out (a page asks: when jobs started waiting for nobody is
    counted by the sender's passes alone, and a page must not restart that count). ``still``:
    the live reader's token of each queue (the sender's passes), see ``_oldest``."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    measure = Measure.from_config()
    if limits is None:
        limits = {s.ref: thresholds(s.ref.slug) for s in found}
    reading = RuleReading()
    work: list[Any] = [
        _oldest(found, limits, now, reading, still),
        _histories(found, limits, measure, now, reading),
        _schedulers(found, limits, now, reading),
    ]
    if workers:
        work.append(_workers(found, limits, reading))
    await asyncio.gather(*work)
    return reading
