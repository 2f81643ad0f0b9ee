"""The names of the alert rules read from history, workers and schedulers (a contract: they
are keys of ``ALERTS`` and ``QUEUE_OPTIONS[q]["alerts"]``, and of every notice)."""

from __future__ import annotations

# Rules over the last RATE_WINDOW seconds of history.
WINDOW_RULES = ("failure_rate_percent", "run_p95_ms", "wait_p95_ms")
HISTORY_RULES = (
    *WINDOW_RULES,
    "oldest_waiting_seconds",
    "no_workers_seconds",
    "stalled_last_hour",
    "scheduler_overdue_seconds",
)
# Defaults of the keys of ALERTS that tune those rules.
RATE_WINDOW_S = 900
RATE_MIN_JOBS = 20
# Minute spans are kept 25 hours: a window longer than a day cannot be read whole.
RATE_WINDOW_MOST_S = 86_400
