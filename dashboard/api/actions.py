"""The POST routes: every action, guarded by ``mutation_view`` (auth, CSRF, read-only, audit).

Parameters come from the query string, a form body, or a JSON body, whichever the client sends,
and are read by the forms of dashboard/forms/actions.py. Job data and options given as text are
JSON text (``"hello"`` with its quotes; a bare word is a 400); a JSON body may also give them as
JSON values.
Bulk actions over a whole state (retry-all, promote-all, clean) are answered at once with 202
and run by the bulk-action executor (dashboard/bulk/launch.py); the others are answered when done.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from django.http import HttpRequest

from dashboard.auth.guards import mutation_view
from dashboard.auth.principal import from_request
from dashboard.auth.queue_access import for_request
from dashboard.auth.queue_lookup import queue_ref
from dashboard.bulk import launch
from dashboard.forms.actions import (
    AddJobForm,
    BulkForm,
    CancelJobForm,
    CleanForm,
    ConcurrencyForm,
    ObliterateForm,
    PauseForm,
    PriorityForm,
    RateLimitForm,
    RescheduleForm,
    RetryAllForm,
    RetryJobForm,
    UpdateDataForm,
)
from dashboard.forms.answer import action_input, valid
from dashboard.pages.htmx import htmx
from queues.actions import cancel, children, job_actions, limits, queue_actions, reschedule
from queues.actions.result import ActionResult
from queues.reads.keys import QueueRef

# ---- one job --------------------------------------------------------------------------------


@mutation_view("retry")
async def retry_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    found = valid(RetryJobForm(action_input(request))).cleaned_data
    return await job_actions.retry_job(
        await queue_ref(queue), job_id, reset_attempts=found["reset_attempts"]
    )


@mutation_view("remove")
async def remove_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await job_actions.remove_job(await queue_ref(queue), job_id)


@mutation_view("promote")
async def promote_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await job_actions.promote_job(await queue_ref(queue), job_id)


@mutation_view("cancel")
async def cancel_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    # Answered once the job's worker cancelled it, or after CANCEL_WAIT seconds with a 409.
    found = valid(CancelJobForm(action_input(request))).cleaned_data
    by = (await from_request(request)).username
    return await cancel.cancel_job(
        await queue_ref(queue), job_id, by=by, note=found["reason"], retry=found["retry"]
    )


@mutation_view("update-data")
async def update_data(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    data = valid(UpdateDataForm(action_input(request))).cleaned_data["data"]
    return await job_actions.update_job_data(await queue_ref(queue), job_id, data)


@mutation_view("duplicate")
async def duplicate_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await job_actions.duplicate_job(await queue_ref(queue), job_id)


@mutation_view("priority")
async def change_priority(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    priority = valid(PriorityForm(action_input(request))).cleaned_data["priority"]
    return await job_actions.change_priority(await queue_ref(queue), job_id, priority)


# ---- bulk actions: recorded and answered at once (202), run by the bulk-action executor -----


@mutation_view("retry-all")
async def retry_all(request: HttpRequest, queue: str) -> ActionResult:
    ref = await queue_ref(queue)
    state = valid(RetryAllForm(action_input(request))).cleaned_data["state"]
    return await launch.start(request, "retry-all", ref, {"state": state})


@mutation_view("promote-all")
async def promote_all(request: HttpRequest, queue: str) -> ActionResult:
    return await launch.start(request, "promote-all", await queue_ref(queue), {})


@mutation_view("clean")
async def clean(request: HttpRequest, queue: str) -> ActionResult:
    ref = await queue_ref(queue)
    found = valid(CleanForm(action_input(request))).cleaned_data
    settings = {"state": found["state"], "grace_ms": found["grace"], "limit": found["limit"]}
    return await launch.start(request, "clean", ref, settings)


# ---- one queue ------------------------------------------------------------------------------


@mutation_view("pause")
async def pause(request: HttpRequest, queue: str) -> ActionResult:
    # The page asks for the reason in a prompt (htmx sends it as HX-Prompt); the API sends it.
    given = action_input(request)
    if not given.get("reason") and htmx(request).prompt:
        given["reason"] = htmx(request).prompt
    reason = valid(PauseForm(given)).cleaned_data["reason"]
    return await queue_actions.pause(await queue_ref(queue), reason)


@mutation_view("resume")
async def resume(request: HttpRequest, queue: str) -> ActionResult:
    return await queue_actions.resume(await queue_ref(queue))


@mutation_view("empty")
async def empty(request: HttpRequest, queue: str) -> ActionResult:
    return await queue_actions.empty(await queue_ref(queue))


@mutation_view("obliterate")
async def obliterate(request: HttpRequest, queue: str) -> ActionResult:
    # The page asks the user to type the name (htmx sends it as its prompt).
    found = valid(ObliterateForm(action_input(request))).cleaned_data
    confirm = found["confirm"] or htmx(request).prompt or ""
    return await queue_actions.obliterate(await queue_ref(queue), confirm, force=found["force"])


@mutation_view("add")
async def add_job(request: HttpRequest, queue: str) -> ActionResult:
    found = valid(AddJobForm(action_input(request))).cleaned_data
    return await queue_actions.add_job(
        await queue_ref(queue), found["name"], found["data"], found["opts"]
    )


@mutation_view("remove-scheduler")
async def remove_scheduler(request: HttpRequest, queue: str, scheduler_id: str) -> ActionResult:
    return await queue_actions.remove_scheduler(await queue_ref(queue), scheduler_id)


_BULK_ACTS = {
    "retry": job_actions.retry_job,
    "remove": job_actions.remove_job,
    "promote": job_actions.promote_job,
}


@mutation_view("bulk")
async def bulk(request: HttpRequest, queue: str) -> ActionResult:
    found = valid(BulkForm(action_input(request))).cleaned_data
    action = found["action"]
    ref = await queue_ref(queue)
    return await job_actions.each_job(ref, found["ids"], f"bulk-{action}", _BULK_ACTS[action])


# ---- every queue ----------------------------------------------------------------------------


@mutation_view("pause-all", queue_scoped=False)
async def pause_all(request: HttpRequest) -> ActionResult:
    return await _every_writable_queue(request, "pause-all", queue_actions.pause)


@mutation_view("resume-all", queue_scoped=False)
async def resume_all(request: HttpRequest) -> ActionResult:
    return await _every_writable_queue(request, "resume-all", queue_actions.resume)


async def _every_writable_queue(
    request: HttpRequest, action: str, act: Callable[[QueueRef], Awaitable[ActionResult]]
) -> ActionResult:
    """``act`` on every queue the user may operate but the read-only ones; those skipped
    (read-only, or only viewable by this user) are named in the answer, hidden ones are not."""
    access = await for_request(request)
    refs = access.visible(await queue_actions.all_queues(), lambda ref: ref.slug)
    writable = [ref for ref in refs if access.may_act_on(ref.slug)]
    result = await queue_actions.for_each_queue(action, act, writable)
    result.detail["skipped"] = [ref.slug for ref in refs if not access.may_act_on(ref.slug)]
    return result


# ---- delays, flows and a queue's limits -----------------------------------------------------


@mutation_view("reschedule")
async def reschedule_job(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    delay_ms = valid(RescheduleForm(action_input(request))).cleaned_data["delay_ms"]
    return await reschedule.reschedule_job(await queue_ref(queue), job_id, delay_ms)


@mutation_view("detach-child")
async def detach_child(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await children.detach_child(await queue_ref(queue), job_id)


@mutation_view("remove-unprocessed-children")
async def remove_unprocessed_children(
    request: HttpRequest, queue: str, job_id: str
) -> ActionResult:
    return await children.remove_unprocessed_children(await queue_ref(queue), job_id)


@mutation_view("concurrency")
async def set_concurrency(request: HttpRequest, queue: str) -> ActionResult:
    concurrency = valid(ConcurrencyForm(action_input(request))).cleaned_data["concurrency"]
    return await limits.set_concurrency(await queue_ref(queue), concurrency)


@mutation_view("rate-limit")
async def set_rate_limit(request: HttpRequest, queue: str) -> ActionResult:
    found = valid(RateLimitForm(action_input(request))).cleaned_data
    return await limits.set_rate_limit(await queue_ref(queue), found["max"], found["duration_ms"])


@mutation_view("rate-limit-release")
async def release_rate_limit(request: HttpRequest, queue: str) -> ActionResult:
    return await limits.release_rate_limit(await queue_ref(queue))
