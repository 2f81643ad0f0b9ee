"""What the worker runner adds to the dashboard: job schedulers, dead-letter replay, and
dropping the dead letters whose original completed since."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.auth import queue_access
from dashboard.auth.guards import HiddenQueue, api_view, mutation_view, page_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.auth.viewer import can_act_on, kind_on_queue
from queues.actions.dead_letter_drop import drop_completed_dead_letters
from queues.actions.dead_letter_replay import ReplayRefused, replay_dead_letter
from queues.actions.result import ActionResult
from queues.errors import BadParameter
from queues.reads.dead_letters import dead_letter_ref
from queues.reads.keys import QueueRef
from queues.reads.schedulers import list_schedulers


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
    access = await queue_access.for_request(request)

    async def may_act(original: QueueRef) -> bool:
        # The replay acts on the original's queue, named by the dead letter's own (untrusted)
        # data: the caller must be allowed to act there, as if it had asked that queue.
        return access.may_view(original.slug) and access.may_act_on(original.slug)

    try:
        replayed = await replay_dead_letter(job_id, dead_letters=ref, permit=may_act)
    except ReplayRefused as refused:
        # Audited under the queue it aimed at; answered as a queue that does not exist.
        raise HiddenQueue(str(refused), refused.original.slug) from None
    # Audited under the queue the job went back to; the dead letter's id is in the detail.
    return ActionResult(
        "replay",
        replayed.queue,
        [job_id],
        1,
        {**replayed.as_json(), "deadLetterQueue": ref.slug},
    )


@mutation_view("drop-completed-dead-letters")
async def drop_completed(request: HttpRequest, queue: str) -> ActionResult:
    ref = await queue_ref(queue)
    if ref != dead_letter_ref(ref.connection):
        raise BadParameter("Only the dead-letter queue holds dead letters")
    return await drop_completed_dead_letters(ref)
