"""What one span (a minute, an hour or a day) holds for one job name, and a span's stored form.

A span of a queue is one Redis string: JSON of ``{name: [completed, failed, retried, stalled,
unmeasured, negative, wait sketch, run sketch, [[job id, run ms], ...]]}``. ``unmeasured``
counts finished jobs without the timestamps to measure them, ``negative`` the durations
dropped because a clock went backwards; the last list holds the span's slowest runs. Adding two
records is exact: counts add, sketches merge, the slowest of both are kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from queues.history.sketch import Sketch

SLOWEST_KEPT = 3
# Where a stored span keeps the queue's record: no job name (a string BullMQ stores) holds NUL.
TOTAL = "\u0000queue"
ONLY_TOTAL = frozenset({TOTAL})


@dataclass
class NameRecord:
    completed: int = 0
    failed: int = 0
    retried: int = 0
    stalled: int = 0
    unmeasured: int = 0
    negative: int = 0
    wait: Sketch = field(default_factory=Sketch)
    run: Sketch = field(default_factory=Sketch)
    slowest: list[tuple[str, float]] = field(default_factory=list)

    def add(self, other: NameRecord) -> None:
        self.completed += other.completed
        self.failed += other.failed
        self.retried += other.retried
        self.stalled += other.stalled
        self.unmeasured += other.unmeasured
        self.negative += other.negative
        self.wait.merge(other.wait)
        self.run.merge(other.run)
        self.keep_slowest(other.slowest)

    def keep_slowest(self, runs: list[tuple[str, float]]) -> None:
        if not runs:
            return
        merged = {job_id: run for job_id, run in self.slowest}
        for job_id, run in runs:
            merged[job_id] = max(run, merged.get(job_id, run))
        ranked = sorted(merged.items(), key=lambda item: (-item[1], item[0]))
        self.slowest = ranked[:SLOWEST_KEPT]

    def as_list(self) -> list[Any]:
        return [
            self.completed,
            self.failed,
            self.retried,
            self.stalled,
            self.unmeasured,
            self.negative,
            self.wait.dumps(),
            self.run.dumps(),
            [[job_id, run] for job_id, run in self.slowest],
        ]

    @classmethod
    def from_list(cls, raw: Any) -> NameRecord:
        if not isinstance(raw, list) or len(raw) < 8:
            raise ValueError("not a history record")
        counts = [int(value) for value in raw[:6]]
        slowest = raw[8] if len(raw) > 8 and isinstance(raw[8], list) else []
        completed, failed, retried, stalled, unmeasured, negative = counts
        return cls(
            completed,
            failed,
            retried,
            stalled,
            unmeasured,
            negative,
            wait=Sketch.loads(str(raw[6])),
            run=Sketch.loads(str(raw[7])),
            slowest=[(str(pair[0]), float(pair[1])) for pair in slowest if len(pair) == 2],
        )


Span = dict[str, NameRecord]


def add_span(into: Span, other: Span) -> None:
    for name, record in other.items():
        mine = into.get(name)
        if mine is None:
            mine = into[name] = NameRecord()
        mine.add(record)


def dumps_span(span: Span) -> str:
    """The stored form, with the queue's record (every name added up) under ``TOTAL``, so that
    a queue's series reads one record a span, not one a name."""
    stored = {name: record.as_list() for name, record in span.items()}
    if span and TOTAL not in span:
        stored[TOTAL] = whole(span).as_list()
    return json.dumps(stored, separators=(",", ":"))


def dumps_total(span: Span) -> str:
    """The queue's record of a span alone, stored as in :func:`dumps_span` (storage.ALONE)."""
    return json.dumps(whole(span).as_list(), separators=(",", ":"))


def loads_span(raw: str | bytes | None, only: frozenset[str] | None = None) -> Span:
    """A stored span (only the records named in ``only``, if given); empty for a missing key or
    one that cannot be read (a partial write is never stored: each span is one SET)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            return {}
        return {
            str(name): NameRecord.from_list(value)
            for name, value in data.items()
            if only is None or name in only
        }
    except (ValueError, TypeError):
        return {}


def merged(spans: list[Span]) -> Span:
    total: Span = {}
    for span in spans:
        add_span(total, span)
    return total


def whole(span: Span) -> NameRecord:
    """Every name of a span added up: the queue's record."""
    stored = span.get(TOTAL)
    if stored is not None:
        return stored
    total = NameRecord()
    for record in span.values():
        total.add(record)
    return total


def by_name(span: Span) -> Span:
    """The span's job names, without the queue's record."""
    return {name: record for name, record in span.items() if name != TOTAL}
