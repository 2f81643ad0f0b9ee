"""What a history read returns: plain values the API, the pages and the metrics share.

Times are milliseconds since the epoch (``t``) or durations in milliseconds; a percentile is
``None`` when no job of that span had the timestamps to measure it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The ranges a reader may ask for, with the step of their points in seconds.
RANGE_STEPS: dict[str, int] = {
    "1h": 60,
    "6h": 60,
    "24h": 60,
    "7d": 3600,
    "30d": 3600,
    "90d": 86400,
}


@dataclass(frozen=True)
class Percentiles:
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None


@dataclass(frozen=True)
class HistoryPoint:
    t: int
    completed: int = 0
    failed: int = 0
    retried: int = 0
    stalled: int = 0
    wait_ms: Percentiles = field(default_factory=Percentiles)
    run_ms: Percentiles = field(default_factory=Percentiles)


@dataclass(frozen=True)
class HistoryTotals:
    completed: int = 0
    failed: int = 0
    retried: int = 0
    stalled: int = 0
    # failed ÷ (completed + failed); None when nothing finished.
    failure_rate: float | None = None
    wait_ms: Percentiles = field(default_factory=Percentiles)
    run_ms: Percentiles = field(default_factory=Percentiles)


@dataclass(frozen=True)
class HistorySeries:
    queue: str
    range: str
    step_s: int
    points: list[HistoryPoint]
    totals: HistoryTotals
    oldest_waiting_ms: int | None = None


@dataclass(frozen=True)
class SlowJob:
    id: str
    run_ms: float


@dataclass(frozen=True)
class NameRow:
    name: str
    completed: int = 0
    failed: int = 0
    retried: int = 0
    stalled: int = 0
    failure_rate: float | None = None
    wait_ms: Percentiles = field(default_factory=Percentiles)
    run_ms: Percentiles = field(default_factory=Percentiles)
    slowest: list[SlowJob] = field(default_factory=list)


@dataclass(frozen=True)
class NamesTable:
    queue: str
    range: str
    names: list[NameRow]
    # Job names beyond the per-queue cap are recorded together under one row; this says so.
    folded_names: bool = False
