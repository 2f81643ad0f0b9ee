"""The live follower's messages, one TypedDict each, built only by the functions below.

These carry data, not markup: the dashboard renders them with the pages' own templates
(dashboard/live/render.py) once per kind of viewer, then sends them to the browsers.
"""

from __future__ import annotations

import time
from typing import Any, Literal, NotRequired, TypedDict

from queues.redis import connections

Topic = tuple[str, ...]  # ("overview",), ("status",), ("queue", slug), ("job", slug, id)


def now_ms() -> int:
    return int(time.time() * 1000)


class CountsEntry(TypedDict):
    slug: str
    name: str
    counts: dict[str, int]
    paused: bool
    # Only for a paused queue: why it was paused, as the dashboard was told ("" for none).
    pauseReason: NotRequired[str]


class OverviewEntry(TypedDict, total=False):
    """A counts entry as the overview gets it: ``name`` only when it is not the slug,
    ``paused`` only when true, ``counts`` only the states that hold jobs."""

    slug: str
    name: str
    counts: dict[str, int]
    paused: bool
    pauseReason: str


class ConnectionTotals(TypedDict):
    queues: int
    counts: dict[str, int]


class CountsMessage(TypedDict):
    type: Literal["counts"]
    queues: list[CountsEntry] | list[OverviewEntry]
    at: int
    eventAt: int  # when the oldest event behind these counts was written (0: none)
    # An overview's: each live reader's connection → how many queues it knows and their
    # counts summed (the overview's totals row), so that a page sent only what changed still
    # shows true totals and sees new queues.
    totals: NotRequired[dict[str, ConnectionTotals]]
    # An overview's: queues that no longer exist (obliterated): pages drop them.
    gone: NotRequired[list[str]]


class StatusMessage(TypedDict):
    type: Literal["status"]
    redis: Literal["ok", "down"]
    detail: str
    at: int
    # Sent by the reader of the event streams every few seconds while it reads: pages that
    # stop hearing it mark their figures stale instead of saying "live".
    beat: bool
    # The Redis connection this is about: each has its own reader (queues/redis/connections.py).
    connection: str
    # With "ok": the part that cannot be read now (Redis Cluster masters down), if any.
    partly: NotRequired[str]


class ProgressUpdate(TypedDict):
    id: str
    progress: Any
    at: int


class ProgressMessage(TypedDict):
    type: Literal["progress"]
    queue: str
    scope: Literal["queue", "job"]  # for a queue page's rows, or for one job's page
    updates: list[ProgressUpdate]


class RowChange(TypedDict, total=False):
    id: str
    state: str
    at: int
    job: dict[str, Any]  # the row as a list page reads it; absent: sent state-only


class Removal(TypedDict):
    id: str
    at: int


class RowsMessage(TypedDict):
    type: Literal["rows"]
    queue: str
    rows: list[RowChange]
    removed: list[Removal]


class JobMessage(TypedDict):
    type: Literal["job"]
    queue: str
    id: str
    job: dict[str, Any]  # queues.detail.job_live_view: state "removed" once gone
    at: int


class LogsMessage(TypedDict):
    type: Literal["logs"]
    queue: str
    id: str
    start: int
    lines: list[str]


class BulkMessage(TypedDict):
    """A bulk action's progress: ``done`` is the count of jobs it moved so far."""

    type: Literal["bulk"]
    queue: str
    action: str
    done: int
    total: int
    id: str  # the bulk action's id
    state: str  # queued, running, done, cancelled, interrupted, failed
    text: str  # once finished: what it did, as the page confirms it
    texts: NotRequired[dict[str, str]]  # once finished: ``text`` in each of the site's languages


class FollowedMessage(TypedDict):
    """The page asks for its list or job again. ``followed``: the reader follows a watched
    queue's events from now on, and what happened between a page's read and this moment is
    not in them. ``recheck``: something no event tells of changed (a job's lock expired)."""

    type: Literal["followed", "recheck"]
    queue: str


class GoneMessage(TypedDict):
    """A watched queue no longer exists (obliterated): its page says so."""

    type: Literal["gone"]
    queue: str


OneMessage = (
    CountsMessage
    | StatusMessage
    | ProgressMessage
    | RowsMessage
    | JobMessage
    | LogsMessage
    | BulkMessage
    | FollowedMessage
    | GoneMessage
)


class BatchMessage(TypedDict):
    """What one pass of the follower has for one topic: one websocket message, not several."""

    type: Literal["batch"]
    messages: list[OneMessage]


LiveMessage = OneMessage | BatchMessage


def counts_entry(
    slug: str, name: str, counts: dict[str, int], paused: bool, reason: str | None = None
) -> CountsEntry:
    entry: CountsEntry = {"slug": slug, "name": name, "counts": counts, "paused": paused}
    if paused and reason is not None:
        entry["pauseReason"] = reason
    return entry


def overview_entry(entry: CountsEntry) -> OverviewEntry:
    """``entry`` as the overview gets it: an overview of thousands of queues gets every
    queue's counts when it connects, and most states are empty, most queues not paused."""
    found: OverviewEntry = {
        "slug": entry["slug"],
        "counts": {state: n for state, n in entry["counts"].items() if n},
    }
    if entry["name"] != entry["slug"]:
        found["name"] = entry["name"]
    if entry["paused"]:
        found["paused"] = True
        if "pauseReason" in entry:
            found["pauseReason"] = entry["pauseReason"]
    return found


def overview_counts_message(
    entries: list[OverviewEntry],
    event_at: int = 0,
    totals: dict[str, ConnectionTotals] | None = None,
    gone: list[str] | None = None,
) -> CountsMessage:
    message: CountsMessage = {
        "type": "counts",
        "queues": entries,
        "at": now_ms(),
        "eventAt": event_at,
    }
    if totals is not None:
        message["totals"] = totals
    if gone:
        message["gone"] = gone
    return message


def counts_message(entries: list[CountsEntry], event_at: int = 0) -> CountsMessage:
    return {"type": "counts", "queues": entries, "at": now_ms(), "eventAt": event_at}


def status_message(
    ok: bool,
    detail: str = "",
    *,
    beat: bool = False,
    connection: str | None = None,
    partly: str = "",
) -> StatusMessage:
    message: StatusMessage = {
        "type": "status",
        "redis": "ok" if ok else "down",
        "detail": detail,
        "at": now_ms(),
        "beat": beat,
        "connection": connection or connections.default_name(),
    }
    if ok and partly:
        message["partly"] = partly
    return message


def progress_message(
    queue: str, updates: list[ProgressUpdate], scope: Literal["queue", "job"]
) -> ProgressMessage:
    return {"type": "progress", "queue": queue, "scope": scope, "updates": updates}


def rows_message(queue: str, rows: list[RowChange], removed: list[Removal]) -> RowsMessage:
    return {"type": "rows", "queue": queue, "rows": rows, "removed": removed}


def followed_message(queue: str) -> FollowedMessage:
    return {"type": "followed", "queue": queue}


def gone_message(queue: str) -> GoneMessage:
    return {"type": "gone", "queue": queue}


def recheck_message(queue: str) -> FollowedMessage:
    return {"type": "recheck", "queue": queue}


def job_message(queue: str, job: dict[str, Any]) -> JobMessage:
    return {"type": "job", "queue": queue, "id": str(job["id"]), "job": job, "at": now_ms()}


def logs_message(queue: str, job_id: str, start: int, lines: list[str]) -> LogsMessage:
    return {"type": "logs", "queue": queue, "id": job_id, "start": start, "lines": lines}


def bulk_message(
    queue: str,
    action: str,
    done: int,
    total: int,
    *,
    action_id: str = "",
    state: str = "running",
    text: str = "",
    texts: dict[str, str] | None = None,
) -> BulkMessage:
    message: BulkMessage = {
        "type": "bulk",
        "queue": queue,
        "action": action,
        "done": done,
        "total": total,
        "id": action_id,
        "state": state,
        "text": text,
    }
    if texts:
        message["texts"] = texts
    return message


def batch_message(messages: list[LiveMessage]) -> BatchMessage:
    flat: list[OneMessage] = []
    for message in messages:
        if message["type"] == "batch":
            flat.extend(message["messages"])  # type: ignore[typeddict-item]
        else:
            flat.append(message)  # type: ignore[arg-type]
    return {"type": "batch", "messages": flat}
