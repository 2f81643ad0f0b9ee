"""Taking an active job (a stuck one, mostly) from its worker: to failed, or back to wait."""

from __future__ import annotations

from django.http import HttpRequest

from dashboard.auth.guards import mutation_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.forms.actions import MoveToFailedForm
from dashboard.forms.answer import action_input, valid
from queues.actions import active_jobs
from queues.actions.result import ActionResult


@mutation_view("move-to-failed")
async def move_to_failed(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    reason = valid(MoveToFailedForm(action_input(request))).cleaned_data["reason"]
    return await active_jobs.move_to_failed(await queue_ref(queue), job_id, reason)


@mutation_view("move-to-wait")
async def move_to_wait(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    return await active_jobs.move_to_wait(await queue_ref(queue), job_id)
