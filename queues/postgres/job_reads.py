"""A Postgres store's jobs: pages of one state in Node BullMQ's order, and one job in full.

Ids come from BullMQ's ``get_range`` (Node's ``getJobs`` calls the same: the list-backed states,
waiting and active, come newest first and an ascending page is that page reversed, as Node
returns it); rows from ``get_job_data``, shaped by the Python package's own row mapping into
the job hash the Redis reads decode, so both stores' jobs are decoded in one place. Fields
longer than the cap are cut here, after the read: the schema keeps each field in one column.
"""

from __future__ import annotations

import time
from typing import Any

from bullmq.backends.postgres_backend import _row_to_job_map

from queues.config.settings import get_config
from queues.errors import JobGone, QueueNotFound
from queues.postgres import rows
from queues.postgres.queue_reads import exists, ref_of
from queues.postgres.sessions import session
from queues.reads.job_fields import job_from_hash
from queues.reads.keys import QueueRef
from queues.reads.listing import JobPage, validate_page

# The state a page asks for → BullMQ's range type; a paused queue's jobs stay in ``wait``.
_RANGE_TYPES = {"waiting": "wait", "paused": "wait"}
_LIST_STATES = frozenset({"waiting", "active", "paused"})
# get_counts' column holding each state's total.
_COUNT_COLUMNS = {"paused": "waiting"}


def _job(row: dict[str, Any], cap: int | None) -> dict[str, Any]:
    raw, lengths = rows.cut(_row_to_job_map(row), cap)
    job = job_from_hash(str(row["id"]), raw, lengths)
    job["dueAt"] = row.get("process_at_ms") if row.get("state") == "delayed" else None
    locked_until = row.get("locked_until_ms")
    job["stuck"] = row.get("state") == "active" and (
        locked_until is None or locked_until < time.time() * 1000
    )
    return job


async def job_page(
    ref: QueueRef, state: str, page: int = 1, per_page: int = 50, order: str = "desc"
) -> JobPage:
    validate_page(state, page, per_page, order)
    start = (page - 1) * per_page
    end = start + per_page - 1
    asc = order == "asc"
    pages = session(ref.connection)
    ranged, counted = await pages.commands(
        [
            ("get_range", [ref.name, _RANGE_TYPES.get(state, state), start, end, asc]),
            ("get_counts", [ref.name]),
        ]
    )
    ids = [str(row["id"]) for row in ranged]
    if asc and state in _LIST_STATES:
        ids.reverse()
    total = int(counted[0].get(_COUNT_COLUMNS.get(state, state)) or 0)
    # Two round trips for a page: whether the queue exists is asked only of an empty one.
    if not ids and not await exists(ref):
        raise QueueNotFound(f"Unknown queue {ref.slug!r}")
    if state == "paused" and str(counted[0].get("paused")) != "1":
        ids, total = [], 0  # a queue that is not paused has no paused jobs
    jobs = await job_rows(ref, ids, int(get_config()["LIST_FIELD_CAP"]))
    for job in jobs:
        job["state"] = state
    return JobPage(jobs, total, page, per_page, state, order)  # type: ignore[arg-type]


async def job_rows(ref: QueueRef, job_ids: list[str], cap: int) -> list[dict[str, Any]]:
    """List rows of ``job_ids`` (fields over ``cap`` cut), each with its state now, in one
    round trip; jobs removed since their ids were read are left out."""
    found_rows = await session(ref.connection).commands(
        [("get_job_data", [ref.name, job_id]) for job_id in job_ids]
    )
    jobs = []
    for found in found_rows:
        if not found:
            continue  # removed since its id was read
        job = _job(found[0], cap)
        del job["stacktrace"]
        job["state"] = rows.job_state(found[0])
        job["queueQualifiedName"] = ref.qualified_name
        jobs.append(job)
    return jobs


def _relative(child_key: str, connection: str) -> dict[str, str]:
    queue, sep, job_id = child_key.partition(":")
    if not (sep and queue and job_id):
        return {"slug": "", "queue": "", "id": child_key}
    return {"slug": ref_of(queue, connection).slug, "queue": queue, "id": job_id}


async def job_detail(
    ref: QueueRef, job_id: str, *, log_lines: int | None = None, cap: int | None = None
) -> dict[str, Any]:
    """The job with ``state``, ``logs`` (the newest ``log_lines``, oldest first), flow
    ``children`` and ``parentRef``, as :func:`queues.reads.detail.job_detail` gives it."""
    lines = int(log_lines if log_lines is not None else get_config()["DETAIL_LOG_LINES"])
    reads = session(ref.connection)
    data, log_count, logs, dependencies = await reads.commands(
        [
            ("get_job_data", [ref.name, job_id]),
            ("get_job_logs_count", [ref.name, job_id]),
            ("get_job_logs_desc", [ref.name, job_id, 0, lines if lines > 0 else None]),
            ("get_dependencies", [ref.name, job_id]),
        ]
    )
    if not data:
        if not await exists(ref):
            raise QueueNotFound(f"Unknown queue {ref.slug!r}")
        raise JobGone(f"No job {job_id!r} in queue {ref.slug!r}")
    row = data[0]
    job = _job(row, cap)
    job["state"] = rows.job_state(row)
    job["queueQualifiedName"] = ref.qualified_name
    job["logs"] = [str(line["row"]) for line in reversed(logs)]
    job["logsCount"] = int(log_count[0]["count"]) if log_count else 0
    children: dict[str, list[dict[str, str]]] = {
        "pending": [],
        "processed": [],
        "failed": [],
        "ignored": [],
    }
    for dependency in dependencies:
        child = _relative(str(dependency["child_key"]), ref.connection)
        children.setdefault(str(dependency["status"]), []).append(child)
    job["children"] = children
    parent_queue, parent_id = row.get("parent_queue"), row.get("parent_id")
    job["parentRef"] = (
        {
            "slug": ref_of(str(parent_queue), ref.connection).slug,
            "queue": str(parent_queue),
            "id": str(parent_id),
        }
        if parent_queue and parent_id is not None
        else None
    )
    return job


async def job_live_view(ref: QueueRef, job_id: str) -> dict[str, Any]:
    """The job as its page's live parts show it; ``{"id", "state": "removed"}`` once gone."""
    found = await session(ref.connection).command("get_job_data", [ref.name, job_id])
    if not found:
        return {"id": job_id, "state": "removed"}
    job = _job(found[0], int(get_config()["DETAIL_FIELD_CAP"]))
    job.pop("data", None)
    job["state"] = rows.job_state(found[0])
    return job


def _size(row: dict[str, Any], state: str) -> int:
    if state == "paused" and str(row.get("paused")) != "1":
        return 0  # a queue that is not paused has no paused jobs
    return int(row.get(_COUNT_COLUMNS.get(state, state)) or 0)


async def state_total(ref: QueueRef, state: str) -> int:
    """The jobs of ``state``, as a page of it counts them (BullMQ's ``get_counts``)."""
    counted = await session(ref.connection).command("get_counts", [ref.name])
    return _size(counted[0] if counted else {}, state)


async def state_sizes(refs: list[QueueRef], states: list[str]) -> list[dict[str, int]]:
    """``state_total`` of each of ``states`` of each of ``refs`` (queues of one store), in
    one round trip."""
    if not refs:
        return []
    counted = await session(refs[0].connection).commands(
        [("get_counts", [ref.name]) for ref in refs]
    )
    return [{state: _size(rows[0] if rows else {}, state) for state in states} for rows in counted]


async def state_ids(ref: QueueRef, state: str, start: int, end: int) -> list[str]:
    """Ids ``start``..``end`` of ``state``, newest first, as a page of it lists them
    (BullMQ's ``get_range``)."""
    ranged = await session(ref.connection).command(
        "get_range", [ref.name, _RANGE_TYPES.get(state, state), start, end, False]
    )
    return [str(row["id"]) for row in ranged]


async def log_tails(ref: QueueRef, job_ids: list[str], lines: int, cap: int) -> list[list[str]]:
    """Each job's newest ``lines`` log lines, oldest of them first, each cut to ``cap``
    characters (BullMQ's ``get_job_logs_desc``); one round trip."""
    found = await session(ref.connection).commands(
        [("get_job_logs_desc", [ref.name, job_id, 0, lines]) for job_id in job_ids]
    )
    return [[str(row["row"])[:cap] for row in reversed(rows)] for rows in found]
