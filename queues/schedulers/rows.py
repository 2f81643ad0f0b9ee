"""One row of the schedulers page from what lua/read_schedulers.lua answers, and their order.

A scheduler's next run moves on only when a worker takes its job (BullMQ names it
``repeat:<scheduler id>:<run in ms>``). One whose next run has passed while that job still
waits, is delayed or is gone is overdue: nothing is running it. One whose job a worker holds
is not, even for the moment before BullMQ moves its next run on.
"""

from __future__ import annotations

from typing import Any

from queues.reads.keys import QueueRef
from queues.reads.schedulers import scheduler_entry

# The states in which the next job has not been taken by a worker.
NOT_TAKEN = frozenset({"waiting", "delayed", "prioritized", "paused", "missing"})
ORDERS = ("overdue", "next", "-next", "queue")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _int(value: Any) -> int | None:
    try:
        return int(_text(value)) if value not in (None, "", b"") else None
    except ValueError:
        return None


def next_job_id(scheduler_id: str, next_ms: int) -> str:
    """The id BullMQ gives the job of a scheduler's run at ``next_ms``."""
    return f"repeat:{scheduler_id}:{next_ms}"


def is_overdue(next_ms: int, next_state: str, now_ms: int) -> bool:
    """The next run has passed and no worker took its job."""
    return next_ms <= now_ms and next_state in NOT_TAKEN


def scheduler_row(ref: QueueRef, raw: list[Any], now_ms: int) -> dict[str, Any]:
    """The page's and API's row for one scheduler: ``raw`` is {id, next run, hash pairs, next
    job's state, last jobs as {id, state, finishedOn} triples}. Its fields are those of the
    queue's own list (queues/reads/schedulers.py: template redacted alike), and where it is."""
    member, score, pairs, state, made = raw
    scheduler_id = _text(member)
    next_ms = int(float(_text(score)))
    fields = {_text(pairs[i]): _text(pairs[i + 1]) for i in range(0, len(pairs) - 1, 2)}
    entry = scheduler_entry(scheduler_id, next_ms, fields, now_ms)
    last_jobs = [
        {"id": _text(made[i]), "state": _text(made[i + 1]), "finishedOn": _int(made[i + 2])}
        for i in range(0, len(made) - 2, 3)
    ]
    # A legacy repeatable's jobs are named after a digest of its key, not its member.
    next_state = _text(state) if state and not entry["legacy"] else None
    runs = [_int(str(job["id"]).rpartition(":")[2]) for job in last_jobs]
    return {
        "queue": ref.slug,
        "connection": ref.connection,
        **entry,
        "nextJob": None if entry["legacy"] else next_job_id(scheduler_id, next_ms),
        "nextJobState": next_state,
        "lastRun": max((run for run in runs if run is not None), default=None),
        "overdue": next_state is not None and is_overdue(next_ms, next_state, now_ms),
        "lastJobs": last_jobs,
    }


def ordered(rows: list[dict[str, Any]], order: str = "overdue") -> list[dict[str, Any]]:
    """``overdue``: the overdue first, then the next to run; ``next``: by next run alone;
    ``-next``: the latest next run first; ``queue``: by queue, then next run."""
    if order == "next":
        return sorted(rows, key=lambda row: (row["next"], row["queue"], row["id"]))
    if order == "-next":
        return sorted(rows, key=lambda row: (-row["next"], row["queue"], row["id"]))
    if order == "queue":
        return sorted(rows, key=lambda row: (row["queue"], row["next"], row["id"]))
    return sorted(rows, key=lambda row: (not row["overdue"], row["next"], row["queue"], row["id"]))
