"""Latency histograms in 1 ms bins, and their JSON form for a viewer child's report."""

from __future__ import annotations

import math
from typing import Any

from live_settings import HIST_LIMIT_MS


class Hist:
    def __init__(self) -> None:
        self.bins = [0] * (HIST_LIMIT_MS + 1)
        self.n = 0
        self.max = 0.0
        self.sum = 0.0

    def add(self, ms: float) -> None:
        if ms < 0:
            ms = 0.0
        i = int(ms)
        self.bins[i if i < HIST_LIMIT_MS else HIST_LIMIT_MS] += 1
        self.n += 1
        self.sum += ms
        if ms > self.max:
            self.max = ms

    def merge(self, other: Hist) -> None:
        for i, c in enumerate(other.bins):
            if c:
                self.bins[i] += c
        self.n += other.n
        self.sum += other.sum
        self.max = max(self.max, other.max)

    def pct(self, p: float) -> float | None:
        """The upper edge of the bin holding the p-th percentile (ms)."""
        if not self.n:
            return None
        want = max(1, math.ceil(p / 100.0 * self.n))
        cum = 0
        for i, c in enumerate(self.bins):
            cum += c
            if cum >= want:
                return float(i + 1)
        return float(HIST_LIMIT_MS)

    def summary(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "p50": self.pct(50),
            "p90": self.pct(90),
            "p99": self.pct(99),
            "p999": self.pct(99.9),
            "max": round(self.max, 1) if self.n else None,
            "mean": round(self.sum / self.n, 1) if self.n else None,
        }


def hist_to_json(h: Hist) -> dict[str, Any]:
    return {
        "bins": {i: c for i, c in enumerate(h.bins) if c},
        "n": h.n,
        "sum": h.sum,
        "max": h.max,
    }


def hist_from_json(d: dict[str, Any]) -> Hist:
    h = Hist()
    for i, c in d["bins"].items():
        h.bins[int(i)] = c
    h.n, h.sum, h.max = d["n"], d["sum"], d["max"]
    return h
