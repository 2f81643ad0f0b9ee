"""Live messages made ready for the browser: markup rendered by the pages' own partials.

The follower sends data (queues/live/protocol.py); this turns it into what a page swaps in,
with the same templates and context as a page load, so a row or a job's state pushed over the
websocket is exactly what a reload would show. Markup that depends on the viewer (checkboxes,
buttons) is rendered once per kind of viewer (dashboard/auth/viewer.py), never per socket.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from django.template.loader import render_to_string
from django.utils.translation import get_language

from dashboard.auth.queue_access import QueueAccess
from dashboard.auth.viewer import ViewerKind, can_act_on
from dashboard.bulk.progress import Bar, bar_html
from dashboard.live.part_digest import digested
from dashboard.pages.job_context import live_context
from dashboard.pages.overview_list import group_key
from queues.live.protocol import (
    BulkMessage,
    CountsMessage,
    JobMessage,
    LiveMessage,
    LogsMessage,
    OneMessage,
    ProgressMessage,
    RowsMessage,
    batch_message,
)
from queues.reads.jsontext import dumps, loads
from queues.reads.keys import QueueRef
from queues.reads.listing import JobPage

# How an overview page groups its queues: (grouping, delimiter) as its list was rendered with
# (dashboard/pages/overview_list.py); each queue's group then comes with its counts, so that
# the page adds up a group's figures without deciding itself which queues are in it.
Grouping = tuple[str, str]
UNGROUPED: Grouping = ("", "")

JOB_PARTS = (
    "bullpen/_job_state.html",
    "bullpen/_job_actions.html",
    "bullpen/_job_facts.html",
    "bullpen/_job_progress.html",
    "bullpen/_job_failure.html",
    "bullpen/_job_returnvalue.html",
    "bullpen/_job_task_status.html",
)


def seen_by(message: LiveMessage, access: QueueAccess) -> LiveMessage | None:
    """``message`` without what concerns queues ``access`` may not view (QUEUE_ACCESS): the
    overview's counts keep the visible queues' entries only. None: nothing is left to send.
    Computed once per audience (those who see the same queues), not per socket."""
    if not access.restricted:
        return message
    if message["type"] == "batch":
        kept = [seen_by(one, access) for one in message["messages"]]  # type: ignore[typeddict-item]
        left: list[Any] = [one for one in kept if one is not None]
        return batch_message(left) if left else None
    if message["type"] == "counts":
        entries: list[Any] = message["queues"]  # type: ignore[typeddict-item]
        visible = [entry for entry in entries if access.may_view(entry["slug"])]
        counts: CountsMessage = {**message, "queues": visible}  # type: ignore[typeddict-item]
        # Totals over every queue are not theirs: their page sums the queues it is sent.
        counts.pop("totals", None)
        return counts
    queue = message.get("queue")
    if isinstance(queue, str) and not access.may_view(queue):
        return None
    return message


def variant(message: LiveMessage, kind: ViewerKind, grouping: Grouping = UNGROUPED) -> str:
    """Viewers whose variant is the same get the same text: one rendering serves them all."""
    if message["type"] == "batch":
        inner = message["messages"]  # type: ignore[typeddict-item]
        parts = {variant(one, kind, grouping) for one in inner}
        return "|".join(sorted(parts)) if parts - {""} else ""
    if message["type"] == "job":
        return kind
    if message["type"] == "rows":
        return "select" if can_act_on(kind, message["queue"]) else "plain"  # type: ignore[typeddict-item]
    if message["type"] == "bulk":  # the bar's Cancel button, for those who may act
        return "act" if can_act_on(kind, message["queue"]) else "plain"  # type: ignore[typeddict-item]
    if message["type"] == "counts" and grouping != UNGROUPED:
        return "group:" + "\x1f".join(grouping)
    return ""


def encode(message: LiveMessage, kind: ViewerKind, grouping: Grouping = UNGROUPED) -> str:
    return dumps(render(message, kind, grouping)).decode()


def render(
    message: LiveMessage, kind: ViewerKind, grouping: Grouping = UNGROUPED
) -> dict[str, Any]:
    if message["type"] == "batch":
        inner = message["messages"]  # type: ignore[typeddict-item]
        return {"type": "batch", "messages": [_one(m, kind, grouping) for m in inner]}
    return _one(message, kind, grouping)  # type: ignore[arg-type]


def _one(message: OneMessage, kind: ViewerKind, grouping: Grouping) -> dict[str, Any]:
    if message["type"] == "counts" and grouping != UNGROUPED:
        return _grouped(message, grouping)  # type: ignore[arg-type]
    if message["type"] == "rows":
        return _rows(message, kind)
    if message["type"] == "job":
        return _job(message, kind)
    if message["type"] == "progress":
        return _progress(message)
    if message["type"] == "logs":
        return _logs(message)
    if message["type"] == "bulk":
        return _bulk(message, kind)
    if message["type"] == "gone":
        # The queue page's notice, as its own template renders it.
        html = render_to_string("bullpen/_queue_gone.html", {"gone": True})
        return {**message, "html": html}
    return dict(message)


def _row_html(slug: str, job: dict[str, Any], selectable: bool) -> str:
    """One job row, as the queue page's list renders it."""
    context = {
        "job": job,
        "queue": {"slug": slug},
        "state": job.get("state"),
        "selectable": selectable,
    }
    return render_to_string("bullpen/_job_row.html", context)


def list_html(slug: str, page: JobPage, kind: ViewerKind, page_sizes: tuple[int, ...]) -> str:
    """The queue page's whole list (totals, rows, pager), as a page load renders it."""
    selectable = can_act_on(kind, slug)
    context = {
        "queue": {"slug": slug},
        "state": page.state,
        "result": page,
        "page_sizes": page_sizes,
        "selectable": selectable,
    }
    return render_to_string("bullpen/_job_list.html", context)


def job_html(slug: str, job: dict[str, Any], kind: ViewerKind) -> str:
    """The job page's live parts, each an element with an id the page swaps."""
    context = live_context(QueueRef.from_slug(slug), job, viewer=kind)
    return "".join(digested(render_to_string(name, context)) for name in JOB_PARTS)


def _rows(message: RowsMessage, kind: ViewerKind) -> dict[str, Any]:
    selectable = can_act_on(kind, message["queue"])
    rows = []
    for change in message["rows"]:
        row: dict[str, Any] = {"id": change["id"], "state": change["state"], "at": change["at"]}
        job = change.get("job")
        if job is not None:
            row["html"] = _row_html(message["queue"], job, selectable)
        rows.append(row)
    return {"type": "rows", "queue": message["queue"], "rows": rows, "removed": message["removed"]}


def _job(message: JobMessage, kind: ViewerKind) -> dict[str, Any]:
    job = message["job"]
    return {
        "type": "job",
        "queue": message["queue"],
        "id": message["id"],
        "state": job.get("state"),
        "at": message["at"],
        "html": job_html(message["queue"], job, kind),
        # The job's node in a flow tree, where a page shows one (static/bullpen/flow.js).
        "node": flow_node_html(message["queue"], job),
    }


def flow_node_html(slug: str, job: dict[str, Any]) -> str:
    node = {
        "queue": slug,
        "id": job.get("id"),
        "state": job.get("state"),
        "name": job.get("name"),
        "progress": job.get("progress"),
        "attemptsMade": job.get("attemptsMade"),
        "failedReason": job.get("failedReason"),
    }
    return render_to_string("bullpen/_flow_node.html", {"node": node})


def _progress_html(scope: str, value_json: str) -> str:
    # Workers report the same few small values over and over (25, 50, {"pct": 75, ...}).
    if len(value_json) <= 256:
        return _small_progress_html(scope, value_json)
    return _render_progress(scope, loads(value_json))


@functools.lru_cache(maxsize=1024)
def _small_progress_html(scope: str, value_json: str) -> str:
    return _render_progress(scope, loads(value_json))


def _render_progress(scope: str, value: Any) -> str:
    if scope == "queue":
        return render_to_string("bullpen/_progress_cell.html", {"progress": value})
    return render_to_string("bullpen/_job_progress.html", {"job": {"progress": value}})


def _progress(message: ProgressMessage) -> dict[str, Any]:
    # A queue page swaps a row's progress cell, a job page its progress box. Workers report the
    # same few values for many jobs at once, so each distinct cell is sent once and the updates
    # point at it: the message stays small however many jobs move.
    cells: list[str] = []
    index: dict[str, int] = {}
    updates = []
    for update in message["updates"]:
        value_json = json.dumps(update["progress"], sort_keys=True)
        cell = index.get(value_json)
        if cell is None:
            cell = index[value_json] = len(cells)
            cells.append(_progress_html(message["scope"], value_json))
        updates.append({"id": update["id"], "at": update["at"], "cell": cell})
    return {
        "type": "progress",
        "queue": message["queue"],
        "scope": message["scope"],
        "cells": cells,
        "updates": updates,
    }


def _logs(message: LogsMessage) -> dict[str, Any]:
    html = render_to_string("bullpen/_log_lines.html", {"lines": message["lines"]})
    return {
        "type": "logs",
        "queue": message["queue"],
        "id": message["id"],
        "start": message["start"],
        "count": len(message["lines"]),
        "html": html,
    }


def _bulk(message: BulkMessage, kind: ViewerKind) -> dict[str, Any]:
    """The action's bar in the active language; its end as the runner said it in that one."""
    text = (message.get("texts") or {}).get(get_language() or "", message["text"])
    queue = message["queue"]
    bar = Bar(
        message["id"],
        queue,
        message["action"],
        message["state"],
        message["done"],
        message["total"],
        text,
    )
    sent: dict[str, Any] = {k: v for k, v in message.items() if k != "texts"}
    sent["text"] = text
    sent["html"] = bar_html(bar, can_act=can_act_on(kind, queue))
    return sent


def _grouped(message: CountsMessage, grouping: Grouping) -> dict[str, Any]:
    entries = [
        {**entry, "group": group_of(entry["slug"], *grouping)} for entry in message["queues"]
    ]
    return {**message, "queues": entries}


@functools.lru_cache(maxsize=50_000)
def group_of(slug: str, how: str, delimiter: str) -> str:
    """The group the overview's list puts the queue in (the same function decides both)."""
    try:
        ref = QueueRef.from_slug(slug)
    except Exception:  # a slug no page shows a row for: in no group
        return ""
    fields = {"name": ref.name, "prefix": ref.prefix, "connection": ref.connection}
    return group_key(fields, how, delimiter)
