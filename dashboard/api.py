"""The JSON GET routes of the API (SPEC section 3). Pages use the same queue-layer calls."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from dashboard.guards import api_view
from dashboard.params import page_params
from dashboard.serializers import queue_json
from queues.counts import summaries
from queues.detail import job_detail
from queues.keys import QueueRef
from queues.listing import job_page


@api_view
async def queues_list(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"queues": [queue_json(s) for s in await summaries()]})


@api_view
async def jobs_list(request: HttpRequest, queue: str) -> JsonResponse:
    state, page, per_page, order = page_params(request)
    result = await job_page(QueueRef.from_slug(queue), state, page, per_page, order)
    return JsonResponse(result.as_json())


@api_view
async def job(request: HttpRequest, queue: str, job_id: str) -> JsonResponse:
    return JsonResponse(await job_detail(QueueRef.from_slug(queue), job_id, log_lines=0))
