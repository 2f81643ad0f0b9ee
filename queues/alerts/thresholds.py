"""Alert thresholds per queue, checked against counts read in the same round trip.

Defaults: waiting > 10,000, failed > 100 in the last hour, delayed > 50,000, active at the
queue's global concurrency limit for more than 5 minutes, more than 0 failure signatures that
first appeared in the last hour (alert_signatures.py). ``ALERTS`` in the settings changes the
defaults; ``QUEUE_OPTIONS[q]["alerts"]`` changes them for one queue (None turns one off). The
dead-letter queue has no waiting alert unless its own options set one. ``ALERTS`` also holds
how alerts are delivered (``ALERT_DELIVERY_KEYS``, read by alert_watch.py), no thresholds.

:func:`alerts_by_queue` is the one place alerts are decided: the overview, ``api/alerts/`` and
``/metrics`` all go through it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from queues.alerts.failed_kept import Still, failed_last
from queues.alerts.names import HISTORY_RULES
from queues.alerts.signatures import new_signatures
from queues.config.queue_options import queue_options
from queues.config.settings import ALERT_DELIVERY_KEYS, get_config
from queues.reads.counts import QueueSummary
from queues.reads.dead_letters import is_dead_letter_queue
from queues.reads.keys import QueueRef
from queues.redis import connections

# The window of the failed_last_hour rule, in seconds.
LAST_HOUR_S = 3600

DEFAULTS: dict[str, int | None] = {
    "waiting": 10_000,
    "failed_last_hour": 100,
    "delayed": 50_000,
    "active_at_limit_seconds": 300,
    "new_failure_signatures": 0,
    # Off unless configured: they read history, workers and schedulers (rules.py).
    **{rule: None for rule in HISTORY_RULES},
}
# The rules the overview, ``api/alerts/`` and ``/metrics`` evaluate (the others: rules.py).
COUNT_RULES = tuple(rule for rule in DEFAULTS if rule not in HISTORY_RULES)
# The counts the rules read (the sender counts no other state at thousands of queues).
COUNTED = frozenset({"waiting", "paused", "active", "delayed", "failed"})
# Signatures named in one new_failure_signatures alert (the count says how many there are).
SIGNATURES_SHOWN = 5

# When each queue was first seen with active == its concurrency limit (per process).
_at_limit_since: dict[QueueRef, float] = {}


@dataclass(frozen=True)
class Alert:
    rule: str
    value: float
    threshold: float
    # The new failure signatures, for that rule (the newest first; untrusted job text).
    signatures: tuple[str, ...] = ()
    # The seconds of history the value was measured over, for rules that read a window.
    window_s: int | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"rule": self.rule, "value": self.value, "threshold": self.threshold}
        if self.signatures:
            body["signatures"] = list(self.signatures)
        if self.window_s is not None:
            body["windowSeconds"] = self.window_s
        return body


# Each queue's thresholds, worked out once per settings (an alert pass asks for thousands):
# the settings' object (get_config's, the same until they change) and what it gave.
_limits: tuple[object, dict[str, dict[str, float | None]]] = (None, {})
# Past it, forgotten whole: above the queues of one pass (at 50,000 queues a cap of 50,000
# forgot them at every call).
_LIMITS_KEPT = 200_000


def thresholds(slug: str) -> dict[str, float | None]:
    """The queue's thresholds (not to be changed: they are kept for the next caller)."""
    global _limits
    config = get_config()
    if _limits[0] is not config or len(_limits[1]) >= _LIMITS_KEPT:
        _limits = (config, {})
    worked_out = _limits[1]
    found = worked_out.get(slug)
    if found is None:
        found = worked_out[slug] = _thresholds(config, slug)
    return found


def _thresholds(config: Mapping[str, Any], slug: str) -> dict[str, float | None]:
    given = config.get("ALERTS") or {}
    merged: dict[str, float | None] = {
        **DEFAULTS,
        **{rule: limit for rule, limit in given.items() if rule not in ALERT_DELIVERY_KEYS},
    }
    if is_dead_letter_queue(slug):
        # Nothing consumes the dead-letter queue, by design: its waiting jobs are dead letters
        # kept for replay, not a backlog. Its own QUEUE_OPTIONS alerts may still set one.
        merged["waiting"] = None
    merged.update(queue_options(slug).get("alerts", {}) or {})
    return merged


# Each queue's thresholds, as :func:`thresholds` gives them, for a pass that reads them once.
Limits = Mapping[QueueRef, Mapping[str, float | None]]
# Decides the alerts of the queues given their last hour's failed jobs and new signatures.
Decide = Callable[
    [
        Sequence[QueueSummary],
        Mapping[QueueRef, Mapping[str, int]],
        Mapping[QueueRef, Sequence[str]],
    ],
    Mapping[QueueRef, list[Alert]],
]


def evaluate(
    summary: QueueSummary,
    failed_last_hour: int,
    signatures: Sequence[str] = (),
    limits: Mapping[str, float | None] | None = None,
) -> list[Alert]:
    """``signatures``: the failure signatures that first appeared in the last hour;
    ``limits``: the queue's thresholds, when the caller has them already."""
    if limits is None:
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
    limit = limits.get("new_failure_signatures")
    if limit is not None and len(signatures) > limit:
        shown = tuple(signatures[:SIGNATURES_SHOWN])
        alerts.append(Alert("new_failure_signatures", len(signatures), limit, shown))
    return alerts


def alerts_by_queue(
    found: Iterable[QueueSummary],
    finished_last_hour: Mapping[QueueRef, Mapping[str, int]],
    signatures: Mapping[QueueRef, Sequence[str]] | None = None,
    limits: Limits | None = None,
) -> dict[QueueRef, list[Alert]]:
    """The alerts firing on each queue, given its jobs finished in the last hour (as
    ``queues.throughput.recent.finished_since`` or ``failed_since`` count them; a queue missing
    there
    failed none) and
    its failure signatures new in the last hour (as :func:`read_signatures` finds them)."""
    new = signatures or {}
    return {
        summary.ref: evaluate(
            summary,
            finished_last_hour.get(summary.ref, {}).get("failed", 0),
            new.get(summary.ref, ()),
            None if limits is None else limits[summary.ref],
        )
        for summary in found
    }


async def read_signatures(
    found: Sequence[QueueSummary],
    finished_last_hour: Mapping[QueueRef, Mapping[str, int]],
    limits: Limits | None = None,
    still: Still | None = None,
) -> dict[QueueRef, list[str]]:
    """New failure signatures of the queues that failed jobs in the last hour and whose
    new_failure_signatures rule is on: the others cannot have any, and cost no read.
    ``still``: the live reader's token of each queue; an answer stands while it does."""
    asked: dict[QueueRef, Hashable] = {}
    lasting: set[QueueRef] = set()
    for summary in found:
        failed = finished_last_hour.get(summary.ref, {}).get("failed", 0)
        limit = (limits[summary.ref] if limits is not None else thresholds(summary.ref.slug)).get(
            "new_failure_signatures"
        )
        if failed and limit is not None:
            # Unchanged counts: no new failure (nor one leaving the window) since last time.
            token = still(summary.ref) if still is not None else None
            asked[summary.ref] = (summary.counts["failed"], failed, token)
            if token is not None:
                lasting.add(summary.ref)
    return await new_signatures(asked, LAST_HOUR_S, lasting)


async def read_alerts(
    found: Sequence[QueueSummary],
    limits: Limits | None = None,
    still: Still | None = None,
    decide: Decide | None = None,
) -> dict[QueueRef, list[Alert]]:
    """:func:`alerts_by_queue` after reading the last hour's failed jobs (one round trip)
    and, for queues that failed some, their new failure signatures. ``still``: the live
    reader's word that no event of a queue came (failed_kept.py): those are not read again.
    ``decide``: what decides instead of :func:`alerts_by_queue`, from the same arguments (the
    overview's kept verdicts, kept.py, with the settings' thresholds, not ``limits``)."""
    if not connections.state_on_redis():
        return {}  # alerts are off without a Redis: nothing could silence or send them
    # A queue that keeps no failed job failed none in the last hour: no read for it.
    failing = [s for s in found if s.counts["failed"]]
    recent = await failed_last([s.ref for s in failing], LAST_HOUR_S, still)
    new = await read_signatures(failing, recent, limits, still)
    if decide is not None:
        return dict(decide(found, recent, new))
    return alerts_by_queue(found, recent, new, limits)
