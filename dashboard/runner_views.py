"""What the worker runner adds to the dashboard: job schedulers, dead-letter replay, and
dropping the dead letters whose original completed since."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.actions_api import queue_ref
from dashboard.guards import api_view, mutation_view, page_view
from dashboard.viewer import can_act_on, kind_on_queue
from queues.actions.dead_letter_drop import drop_completed_dead_letters
from queues.actions.dead_letter_replay import replay_dead_letter
from queues.actions.result import ActionResult
from queues.dead_letters import dead_letter_ref
from queues.errors import BadParameter
from queues.schedulers import list_schedulers


@api_view
async def schedulers_api(request: HttpRequest, queue: str) -> JsonResponse:
    return JsonResponse({"schedulers": await list_schedulers(await queue_ref(queue))})


@page_view
async def schedulers_fragment(request: HttpRequest, queue: str) -> HttpResponse:
    ref = await queue_ref(queue)
    kind = await kind_on_queue(request, ref.slug)
    return render(
        request,
        "bullpen/_schedulers.html",
        {
            "schedulers": await list_schedulers(ref),
            "queue": {"slug": ref.slug},
            "can_act": can_act_on(kind, ref.slug),
        },
    )


@mutation_view("replay")
async def replay(request: HttpRequest, queue: str, job_id: str) -> ActionResult:
    ref = await queue_ref(queue)
    if ref != dead_letter_ref(ref.connection):
        raise BadParameter("Only jobs of the dead-letter queue can be replayed")
    replayed = await replay_dead_letter(job_id, dead_letters=ref)
    return ActionResult("replay", ref.slug, [job_id], 1, replayed.as_json())


@mutation_view("drop-completed-dead-letters")
async def drop_completed(request: HttpRequest, queue: str) -> ActionResult:
    ref = await queue_ref(queue)
    if ref != dead_letter_ref(ref.connection):
        raise BadParameter("Only the dead-letter queue holds dead letters")
    return await drop_completed_dead_letters(ref)
