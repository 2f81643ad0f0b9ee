"""Alert thresholds per queue, checked against counts read in the same round trip.

Defaults: waiting > 10,000, failed > 100 in the last hour, delayed > 50,000, active at the
queue's global concurrency limit for more than 5 minutes. ``ALERTS`` in the settings changes the
defaults; ``QUEUE_OPTIONS[q]["alerts"]`` changes them for one queue (None turns one off). The
dead-letter queue has no waiting alert unless its own options set one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from queues.conf import get_config
from queues.counts import QueueSummary
from queues.dead_letters import is_dead_letter_queue
from queues.keys import QueueRef

DEFAULTS: dict[str, int | None] = {
    "waiting": 10_000,
    "failed_last_hour": 100,
    "delayed": 50_000,
    "active_at_limit_seconds": 300,
}

# When each queue was first seen with active == its concurrency limit (per process).
_at_limit_since: dict[QueueRef, float] = {}


@dataclass(frozen=True)
class Alert:
    rule: str
    value: int
    threshold: int

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "value": self.value, "threshold": self.threshold}


def thresholds(slug: str) -> dict[str, int | None]:
    config = get_config()
    merged: dict[str, int | None] = {**DEFAULTS, **(config.get("ALERTS") or {})}
    if is_dead_letter_queue(slug):
        # Nothing consumes the dead-letter queue, by design: its waiting jobs are dead letters
        # kept for replay, not a backlog. Its own QUEUE_OPTIONS alerts may still set one.
        merged["waiting"] = None
    merged.update(config.get("QUEUE_OPTIONS", {}).get(slug, {}).get("alerts", {}) or {})
    return merged


def evaluate(summary: QueueSummary, failed_last_hour: int) -> list[Alert]:
    limits = thresholds(summary.ref.slug)
    alerts = []
    checks = {
        "waiting": summary.counts["waiting"] + summary.counts["paused"],
        "failed_last_hour": failed_last_hour,
        "delayed": summary.counts["delayed"],
    }
    for rule, value in checks.items():
        limit = limits.get(rule)
        if limit is not None and value > limit:
            alerts.append(Alert(rule, value, limit))
    limit_s = limits.get("active_at_limit_seconds")
    cap = summary.global_concurrency
    now = time.monotonic()
    if cap and summary.counts["active"] >= cap:
        since = _at_limit_since.setdefault(summary.ref, now)
        if limit_s is not None and now - since > limit_s:
            alerts.append(Alert("active_at_limit_seconds", int(now - since), limit_s))
    else:
        _at_limit_since.pop(summary.ref, None)
    return alerts
