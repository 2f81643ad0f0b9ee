"""Job schedulers from the page or the API: create or update one, and run one now.

``api/queues/<q>/schedulers/`` lists them on GET and creates or updates one on POST: one
address for the collection, as REST clients expect; each method keeps its own guard.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from dashboard.api.worker_runner_views import schedulers_api
from dashboard.auth.guards import json_error, mutation_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.forms.answer import action_input, valid
from dashboard.forms.schedulers import SchedulerForm
from queues.actions.result import ActionResult
from queues.actions.scheduler_actions import run_scheduler_now, upsert_scheduler


@mutation_view("upsert-scheduler")
async def upsert(request: HttpRequest, queue: str) -> ActionResult:
    form = valid(SchedulerForm(action_input(request)))
    found = form.cleaned_data
    return await upsert_scheduler(
        await queue_ref(queue),
        found["id"],
        form.repeat_options(),
        found["name"],
        found["data"],
        found["opts"],
    )


@mutation_view("run-scheduler")
async def run_now(request: HttpRequest, queue: str, scheduler_id: str) -> ActionResult:
    return await run_scheduler_now(await queue_ref(queue), scheduler_id)


@csrf_exempt  # the POST's guard checks the origin and, for sessions, the CSRF token itself
async def schedulers(request: HttpRequest, queue: str, **kwargs: Any) -> HttpResponseBase:
    if request.method in ("GET", "HEAD"):
        return await schedulers_api(request, queue)
    if request.method == "POST":
        return await upsert(request, queue=queue)
    response = json_error("Method not allowed", 405)
    response["Allow"] = "GET, HEAD, POST"
    return response
