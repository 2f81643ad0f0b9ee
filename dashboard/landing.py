"""After an action from a page: where the person lands, and what that page confirms.

The page the action came from is reloaded, unless the action destroyed what it shows: a
removed job's page would answer 404, so removing a job lands on its queue's list at the tab it
was in; obliterating a queue lands on the overview; replaying a dead letter (which removes it)
lands on the job it became. The JSON answer stays the same for every client: htmx reads only
the ``HX-Refresh`` / ``HX-Redirect`` header.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.http import urlencode

from dashboard import notices
from queues.actions.result import ActionResult
from queues.keys import STATES

# Job ids and queue names are untrusted and may be long: a confirmation shows at most this much
# of one (pages escape it).
_MAX_NAME = 80

_JOB_DONE = {
    "remove": "removed",
    "retry": "retried",
    "promote": "promoted",
    "update-data": "data updated",
    "add": "added",
}
_JOBS_DONE = {
    "bulk-remove": "removed",
    "remove-group": "removed",
    "remove-matches": "removed",
    "bulk-retry": "retried",
    "retry-group": "retried",
    "retry-all": "retried",
    "retry-matches": "retried",
    "bulk-promote": "promoted",
    "promote-all": "promoted",
    "promote-matches": "promoted",
}
_QUEUE_DONE = {"pause": "paused", "resume": "resumed", "obliterate": "obliterated"}


def _concurrency_done(queue: str, detail: dict[str, Any]) -> str:
    concurrency = detail.get("concurrency")
    if concurrency is None:
        return f"Queue {queue}: global concurrency removed"
    return f"Queue {queue}: global concurrency set to {concurrency}"


def _rate_limit_done(queue: str, detail: dict[str, Any]) -> str:
    limit = detail.get("rateLimit")
    if not isinstance(limit, dict):
        return f"Queue {queue}: rate limit removed"
    return f"Queue {queue}: rate limit set to {limit.get('max')} per {limit.get('duration')} ms"


def _release_done(queue: str, detail: dict[str, Any]) -> str:
    if detail.get("released"):
        return f"Queue {queue}: rate limit released"
    return f"Queue {queue}: no rate limit was in force"


_LIMITS_DONE: dict[str, Callable[[str, dict[str, Any]], str]] = {
    "concurrency": _concurrency_done,
    "rate-limit": _rate_limit_done,
    "rate-limit-release": _release_done,
}


def _name(value: object) -> str:
    text = str(value)
    return text if len(text) <= _MAX_NAME else text[: _MAX_NAME - 1] + "…"


def _jobs(count: int) -> str:
    return f"{count} job" if count == 1 else f"{count} jobs"


def confirmation(result: ActionResult) -> str:
    """What the landing page says about ``result``, as plain text."""
    action, detail = result.action, result.detail
    job = _name(result.job_ids[0]) if result.job_ids else ""
    queue = _name(result.queue or "")
    if action in _JOB_DONE and job:
        verb = _JOB_DONE[action]
        return f"Job {job} {verb}" if action != "update-data" else f"Job {job}: {verb}"
    if action in _JOBS_DONE:
        text = f"{_jobs(result.count)} {_JOBS_DONE[action]}"
        refused = detail.get("results") or {}
        return f"{text}, {len(refused)} refused" if refused else text
    if action in _QUEUE_DONE:
        return f"Queue {queue} {_QUEUE_DONE[action]}"
    if action == "duplicate":
        return f"Job {job} duplicated as job {_name(detail.get('newJobId', '?'))}"
    if action == "priority":
        return f"Job {job}: priority set to {detail.get('priority')}"
    if action == "clean":
        return f"{_jobs(result.count)} cleaned from {_name(detail.get('state', ''))}"
    if action == "empty":
        return f"Queue {queue} emptied: {_jobs(result.count)} removed"
    if action in _LIMITS_DONE:
        return _LIMITS_DONE[action](queue, detail)
    if action == "reschedule" and job:
        return f"Job {job} rescheduled"
    if action == "remove-unprocessed-children" and job:
        children = "child" if result.count == 1 else "children"
        return f"Job {job}: {result.count} unprocessed {children} removed"
    if action == "remove-scheduler":
        return f"Job scheduler {_name(detail.get('scheduler', ''))} removed"
    if action == "upsert-scheduler":
        verb = "created" if detail.get("created") else "updated"
        return f"Job scheduler {_name(detail.get('scheduler', ''))} {verb}"
    if action == "run-scheduler" and job:
        return f"Job scheduler {_name(detail.get('scheduler', ''))} ran now: job {job} added"
    if action in ("pause-all", "resume-all"):
        verb = "paused" if action == "pause-all" else "resumed"
        text = f"{result.count} queue{'' if result.count == 1 else 's'} {verb}"
        skipped = [_name(slug) for slug in detail.get("skipped") or []]
        return f"{text}; read-only, skipped: {', '.join(skipped)}" if skipped else text
    if action in ("group-pause", "group-resume", "group-retry"):
        return _group_done(result)
    if action == "replay":
        return (
            f"Dead letter {job} replayed: job {_name(detail.get('jobId', '?'))} of "
            f"{_name(detail.get('queue', '?'))} {detail.get('how', 'replayed')}"
        )
    return f"Done: {_name(action)}"


def _group_done(result: ActionResult) -> str:
    detail = result.detail
    group = _name(detail.get("group", ""))
    queues = detail.get("queues") or []
    many = f"{len(queues)} queue{'' if len(queues) == 1 else 's'}"
    if result.action == "group-retry":
        text = f"Group {group}: retrying {_jobs(result.count)} failed in {many}"
    else:
        verb = "paused" if result.action == "group-pause" else "resumed"
        text = f"Group {group}: {many} {verb}"
    skipped = [_name(slug) for slug in detail.get("skipped") or []]
    return f"{text}; read-only, skipped: {', '.join(skipped)}" if skipped else text


def destination(result: ActionResult) -> str | None:
    """Where to land when the current page no longer shows anything true; None: reload it."""
    detail = result.detail
    if result.action == "remove" and result.queue:
        url = reverse("bullpen:queue", args=[result.queue])
        state = detail.get("from")
        return f"{url}?{urlencode({'state': state})}" if state in STATES else url
    if result.action == "obliterate":
        return reverse("bullpen:overview")
    if result.action == "replay" and detail.get("queue") and detail.get("jobId"):
        return reverse("bullpen:job", args=[detail["queue"], detail["jobId"]])
    return None


def answer_accepted(response: HttpResponseBase) -> None:
    """A bulk action accepted from a page: the page stays where it is and follows it (the
    progress bar, then the confirmation, from static/bullpen/actions.js)."""
    response["HX-Reswap"] = "none"


def answer_page(request: HttpRequest, response: HttpResponseBase, result: ActionResult) -> None:
    """An htmx request succeeded: keep the confirmation and tell htmx where to go."""
    notices.add(request, response, confirmation(result))
    url = destination(result)
    if url is None:
        response["HX-Refresh"] = "true"
    else:
        response["HX-Redirect"] = url
