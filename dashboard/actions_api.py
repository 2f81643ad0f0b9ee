"""The POST routes: every action, guarded by ``mutation_view`` (auth, CSRF, read-only, audit).

Parameters come from the query string, a form body, or a JSON body, whichever the client sends.
Bulk actions over a whole state (retry-all, promote-all, clean) are answered at once with 202
and run in the background (dashboard/background.py); the others are answered when done.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from django.http import HttpRequest

from dashboard import background
from dashboard.access import is_read_only
from dashboard.guards import mutation_view
from dashboard.params import MAX_ID, duration_ms, milliseconds, text, whole_number
from queues.actions import job_actions, queue_actions
from queues.actions.result import ActionResult
from queues.discovery import known
from queues.errors import BadParameter, QueueNotFound
from queues.keys import QueueRef

MAX_BULK = 1000
DEFAULT_GRACE = "1 h"
MAX_CLEAN_LIMIT = 1_000_000_000  # jobs one clean may remove (0: no limit)
MAX_PRIORITY = 2_097_152  # BullMQ's highest priority


def params(request: HttpRequest) -> dict[str, Any]:
    merged: dict[str, Any] = dict(request.GET.items())
    if request.content_type == "application/json" and request.body:
        try:
            body = json.loads(request.body)
        except ValueError:
            raise BadParameter("The body is not valid JSON") from None
        if not isinstance(body, dict):
            raise BadParameter("The JSON body must be an object")
        merged.update(body)
    else:
        for key in request.POST:
            values = request.POST.getlist(key)
            merged[key] = values if key == "ids" else values[-1]
    return merged


def _json_value(values: dict[str, Any], name: str, default: Any = None) -> Any:
    raw = values.get(name, default)
    if isinstance(raw, str) and raw.strip() and raw.strip()[0] in '{["0123456789-tfn':
        try:
            return json.loads(raw)
        except ValueError:
            raise BadParameter(f"{name} is not valid JSON") from None
    return raw


async def queue_ref(slug: str) -> QueueRef:
    ref = QueueRef.from_slug(slug)
    if not await known(ref):
        raise QueueNotFound(f"Unknown queue {slug!r}")
    return ref


# ---- one job --------------------------------------------------------------------------------


@mutation_view("retry")
async def retry_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await job_actions.retry_job(await queue_ref(queue), job_id)


@mutation_view("remove")
async def remove_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await job_actions.remove_job(await queue_ref(queue), job_id)


@mutation_view("promote")
async def promote_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await job_actions.promote_job(await queue_ref(queue), job_id)


@mutation_view("update-data")
async def update_data(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    values = params(request)
    if "data" not in values:
        raise BadParameter("data is required (the new job data, as JSON)")
    return await job_actions.update_job_data(
        await queue_ref(queue), job_id, _json_value(values, "data")
    )


@mutation_view("duplicate")
async def duplicate_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await job_actions.duplicate_job(await queue_ref(queue), job_id)


@mutation_view("priority")
async def change_priority(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    priority = whole_number(params(request), "priority", low=0, high=MAX_PRIORITY)
    return await job_actions.change_priority(await queue_ref(queue), job_id, priority)


# ---- bulk actions: recorded and answered at once (202), run by the background runner --------


@mutation_view("retry-all")
async def retry_all(request: HttpRequest, queue: str) -> ActionResult:
    ref = await queue_ref(queue)
    state = text(params(request), "state") or "failed"
    return await background.start(request, "retry-all", ref, {"state": state})


@mutation_view("promote-all")
async def promote_all(request: HttpRequest, queue: str) -> ActionResult:
    return await background.start(request, "promote-all", await queue_ref(queue), {})


@mutation_view("clean")
async def clean(request: HttpRequest, queue: str) -> ActionResult:
    values = params(request)
    ref = await queue_ref(queue)
    settings = {
        "state": text(values, "state"),
        "grace_ms": _grace_ms(values),
        "limit": whole_number(values, "limit", 0, low=0, high=MAX_CLEAN_LIMIT),
    }
    return await background.start(request, "clean", ref, settings)


def _grace_ms(values: dict[str, Any]) -> int:
    """``grace`` as a person types it ("30 min"), or ``grace_ms`` as API clients always sent."""
    given = [name for name in ("grace", "grace_ms") if values.get(name) not in (None, "")]
    if len(given) == 2:
        raise BadParameter("Give grace or grace_ms, not both")
    if given == ["grace_ms"]:
        return milliseconds(values, "grace_ms")
    return duration_ms(values, "grace", DEFAULT_GRACE)


# ---- one queue ------------------------------------------------------------------------------


@mutation_view("pause")
async def pause(request: HttpRequest, queue: str) -> ActionResult:
    return await queue_actions.pause(await queue_ref(queue))


@mutation_view("resume")
async def resume(request: HttpRequest, queue: str) -> ActionResult:
    return await queue_actions.resume(await queue_ref(queue))


@mutation_view("empty")
async def empty(request: HttpRequest, queue: str) -> ActionResult:
    return await queue_actions.empty(await queue_ref(queue))


@mutation_view("obliterate")
async def obliterate(request: HttpRequest, queue: str) -> ActionResult:
    # The page asks the user to type the name (htmx sends it as HX-Prompt).
    confirm = text(params(request), "confirm") or request.headers.get("HX-Prompt") or ""
    return await queue_actions.obliterate(await queue_ref(queue), confirm)


@mutation_view("add")
async def add_job(request: HttpRequest, queue: str) -> ActionResult:
    values = params(request)
    opts = _json_value(values, "opts", {}) or {}
    return await queue_actions.add_job(
        await queue_ref(queue), text(values, "name"), _json_value(values, "data", {}), opts
    )


@mutation_view("remove-scheduler")
async def remove_scheduler(request: HttpRequest, queue: str, scheduler_id: str) -> ActionResult:
    return await queue_actions.remove_scheduler(await queue_ref(queue), scheduler_id)


BULK_ACTIONS = {
    "retry": job_actions.retry_job,
    "remove": job_actions.remove_job,
    "promote": job_actions.promote_job,
}


@mutation_view("bulk")
async def bulk(request: HttpRequest, queue: str) -> ActionResult:
    values = params(request)
    action = text(values, "action")
    act = BULK_ACTIONS.get(action)
    if act is None:
        raise BadParameter(f"action must be one of: {', '.join(BULK_ACTIONS)}")
    ids = values.get("ids") or []
    if isinstance(ids, str):
        ids = [part for part in ids.split(",") if part]
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise BadParameter("ids must be a non-empty list of job ids")
    if any(len(i) > MAX_ID for i in ids):
        raise BadParameter(f"a job id has at most {MAX_ID} characters")
    if len(ids) > MAX_BULK:
        raise BadParameter(f"at most {MAX_BULK} jobs at once")
    return await job_actions.each_job(await queue_ref(queue), ids, f"bulk-{action}", act)


# ---- every queue ----------------------------------------------------------------------------


@mutation_view("pause-all", queue_scoped=False)
async def pause_all(request: HttpRequest) -> ActionResult:
    return await _every_writable_queue("pause-all", queue_actions.pause)


@mutation_view("resume-all", queue_scoped=False)
async def resume_all(request: HttpRequest) -> ActionResult:
    return await _every_writable_queue("resume-all", queue_actions.resume)


async def _every_writable_queue(
    action: str, act: Callable[[QueueRef], Awaitable[ActionResult]]
) -> ActionResult:
    """``act`` on every queue but the read-only ones, which the answer names as skipped."""
    refs = await queue_actions.all_queues()
    writable = [ref for ref in refs if not is_read_only(ref.slug)]
    result = await queue_actions.for_each_queue(action, act, writable)
    result.detail["skipped"] = [ref.slug for ref in refs if is_read_only(ref.slug)]
    return result
