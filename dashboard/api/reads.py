"""The JSON GET routes of the API (listed in README.md). Pages use the same queue-layer calls.

Each route's body comes from one function shared with ``dashboard.api.fast_path``, the ASGI fast
path that serves these same routes without Django's request cycle when reads are open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, JsonResponse

from dashboard.auth.guards import api_view
from dashboard.auth.queue_access import EVERYTHING, QueueAccess, for_request
from dashboard.forms.answer import valid
from dashboard.forms.reads import OverviewForm, job_page_params
from dashboard.pages import relatives
from dashboard.pages.overview_page import listing_json, read_listing
from queues.reads.detail import job_detail
from queues.reads.keys import QueueRef
from queues.reads.listing import job_page


async def queues_body(query: Mapping[str, Any], access: QueueAccess = EVERYTHING) -> dict[str, Any]:
    listing = await read_listing(valid(OverviewForm(query)).query(), page=False, access=access)
    return listing_json(listing)


async def jobs_body(queue: str, query: Mapping[str, Any]) -> dict[str, Any]:
    state, page, per_page, order = job_page_params(query)
    result = await job_page(QueueRef.from_slug(queue), state, page, per_page, order)
    return result.as_json()


async def job_body(queue: str, job_id: str) -> dict[str, Any]:
    return await job_detail(QueueRef.from_slug(queue), job_id, log_lines=0)


@api_view
async def queues_list(request: HttpRequest) -> JsonResponse:
    return JsonResponse(await queues_body(request.GET, await for_request(request)))


@api_view
async def jobs_list(request: HttpRequest, queue: str) -> JsonResponse:
    return JsonResponse(await jobs_body(queue, request.GET))


@api_view
async def job(request: HttpRequest, queue: str, job_id: str) -> JsonResponse:
    body = relatives.seen_by(await for_request(request), await job_body(queue, job_id))
    # The whole job, 30 MB at times: written out off the event loop, which serves the others.
    return await asyncio.to_thread(JsonResponse, body)
