"""Cumulative wait and run histograms per queue and job name, for Prometheus' ``/metrics``.

Each minute the recorder writes (once: only when its ``SET NX`` won) adds its jobs to one hash
per queue, ``<own>:hist:<prefix>:<queue>:prom``: fields ``<w|r>|<le>|<name>`` (jobs whose wait
or run was at most ``le`` seconds and above the bucket before), ``<w|r>|sum|<name>`` and
``<w|r>|count|<name>``. These only grow, as Prometheus counters should (``rate()`` and
``histogram_quantile()`` work on them); a job is placed in its bucket by the sketch, so within
1 % of its bound, and the sums are within 1 % too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from queues.history.record import Span, by_name
from queues.history.sketch import Sketch, value_of
from queues.history.storage import DAY_TTL_S, base
from queues.reads.keys import QueueRef
from queues.redis import per_connection
from queues.redis.errors import translate_redis_errors

BUCKETS_S = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
    900.0,
    3600.0,
)
KINDS = {"w": "wait", "r": "run"}


def prom_key(ref: QueueRef) -> str:
    return f"{base(ref)}:prom"


def increments(span: Span) -> dict[str, float]:
    """The hash fields one minute adds to (non-zero ones only)."""
    out: dict[str, float] = {}
    for name, record in by_name(span).items():
        for kind, sketch in (("w", record.wait), ("r", record.run)):
            if not sketch:
                continue
            per_bucket, total = _buckets(sketch)
            for index, times in per_bucket.items():
                if times:
                    out[f"{kind}|{_le(index)}|{name}"] = times
            out[f"{kind}|sum|{name}"] = round(total, 6)
            out[f"{kind}|count|{name}"] = sketch.count
    return out


def _le(index: int) -> str:
    return "+Inf" if index >= len(BUCKETS_S) else str(BUCKETS_S[index])


def _buckets(sketch: Sketch) -> tuple[dict[int, int], float]:
    """Jobs per Prometheus bucket (by index into BUCKETS_S, len for +Inf) and their sum (s)."""
    per_bucket: dict[int, int] = defaultdict(int)
    per_bucket[0] += sketch.zero
    total = 0.0
    for index, times in sketch.buckets.items():
        seconds = value_of(index) / 1000
        total += seconds * times
        per_bucket[
            next((i for i, bound in enumerate(BUCKETS_S) if seconds <= bound), len(BUCKETS_S))
        ] += times
    return per_bucket, total


def add_to_pipeline(pipe: Any, ref: QueueRef, span: Span) -> None:
    fields = increments(span)
    if not fields:
        return
    key = prom_key(ref)
    for name, amount in fields.items():
        if isinstance(amount, int):
            pipe.hincrby(key, name, amount)
        else:
            pipe.hincrbyfloat(key, name, amount)
    pipe.expire(key, DAY_TTL_S)


@dataclass
class Histogram:
    """One cumulative histogram: counts per bucket bound (cumulative), sum and count."""

    buckets: list[tuple[str, int]] = field(default_factory=list)
    sum: float = 0.0
    count: int = 0


# (kind "wait"/"run", job name or None for the whole queue) → histogram
Histograms = dict[tuple[str, str | None], Histogram]


def histograms(raw: dict[str, str], per_name: bool) -> Histograms:
    """The hash read back as cumulative histograms: per queue, and per name if asked."""
    counts: dict[tuple[str, str | None], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for field_name, value in raw.items():
        parts = field_name.split("|", 2)
        if len(parts) != 3 or parts[0] not in KINDS:
            continue
        kind, part, name = KINDS[parts[0]], parts[1], parts[2]
        try:
            amount = float(value)
        except ValueError:
            continue
        counts[(kind, None)][part] += amount
        if per_name:
            counts[(kind, name)][part] += amount
    out: Histograms = {}
    for series, sums in counts.items():
        running = 0
        buckets = []
        for bound in (*(str(b) for b in BUCKETS_S), "+Inf"):
            running += int(sums.get(bound, 0))
            buckets.append((bound, running))
        out[series] = Histogram(buckets, round(sums.get("sum", 0.0), 6), int(sums.get("count", 0)))
    return out


async def read_histograms(refs: list[QueueRef], per_name: bool) -> dict[QueueRef, Histograms]:
    """Every queue's histograms, one round trip per connection."""
    if not refs:
        return {}
    async with translate_redis_errors():
        replies = await per_connection.execute_for(
            refs, [("HGETALL", prom_key(ref)) for ref in refs]
        )
    found = {}
    for ref, reply in zip(refs, replies, strict=True):
        if isinstance(reply, dict) and reply:
            found[ref] = histograms(reply, per_name)
        elif isinstance(reply, list) and reply:
            found[ref] = histograms(dict(zip(reply[0::2], reply[1::2], strict=True)), per_name)
    return found
