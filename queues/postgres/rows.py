"""What BullMQ's Postgres rows mean to Bullpen: pure functions, no connection.

A queue's counts row (``get_counts``) and meta rows become a summary; a job row's state is
said as BullMQ's ``getState`` says it; long fields are cut for a list page.
"""

from __future__ import annotations

from typing import Any

from queues.reads.counts import QueueSummary
from queues.reads.keys import STATES, QueueRef


def number(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def summary(
    ref: QueueRef, count_rows: list[dict[str, Any]], meta_rows: list[dict[str, Any]]
) -> QueueSummary:
    row = count_rows[0] if count_rows else {}
    meta = {str(item["field"]): item["value"] for item in meta_rows}
    paused = str(row.get("paused")) == "1"
    counts = {state: int(row.get(state) or 0) for state in STATES if state != "paused"}
    # As Node's BullMQ reports a paused Postgres queue: its waiting jobs count as paused.
    counts["paused"] = counts["waiting"] if paused else 0
    if paused:
        counts["waiting"] = 0
    max_jobs, duration = number(meta.get("max")), number(meta.get("duration"))
    return QueueSummary(
        ref=ref,
        counts={state: counts[state] for state in STATES},
        paused=paused,
        global_concurrency=number(meta.get("concurrency")),
        rate_limit=(max_jobs, duration) if max_jobs and duration else None,
        version=meta.get("version"),
    )


def job_state(row: dict[str, Any]) -> str:
    """The job's state as BullMQ's ``getState`` says it (a waiting job with a priority is
    prioritized)."""
    state = str(row.get("state"))
    if state == "waiting" and int(row.get("priority") or 0) > 0:
        return "prioritized"
    return state


def cut(raw: dict[str, str], cap: int | None) -> tuple[dict[str, str], dict[str, int]]:
    """``raw`` with values longer than ``cap`` characters cut, and their full lengths."""
    if cap is None:
        return raw, {}
    lengths = {name: len(value) for name, value in raw.items() if len(value) > cap}
    kept = {name: value[:cap] if name in lengths else value for name, value in raw.items()}
    return kept, lengths
