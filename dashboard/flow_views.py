"""A job's flow from its root: as JSON, and as the tree the job page loads."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.actions_api import queue_ref
from dashboard.forms.answer import valid
from dashboard.forms.flow import FlowForm
from dashboard.guards import api_view, page_view
from queues.flow import read_flow

# The job page's tree: at most this many nodes (breadth first) and children of one parent,
# unless the page's address asks otherwise; the rest are counted under their parents. A
# page longer than this is not read, and each node costs its read (about 15 commands).
PAGE_NODES = 200
PAGE_CHILDREN = 20


@api_view
async def flow_api(request: HttpRequest, queue: str, job_id: str) -> JsonResponse:
    found = valid(FlowForm(request.GET)).cleaned_data
    flow = await read_flow(await queue_ref(queue), job_id, found["depth"], found["max_children"])
    return JsonResponse(flow)


@page_view
async def flow_fragment(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    found = valid(FlowForm({"max_children": PAGE_CHILDREN, **request.GET.dict()})).cleaned_data
    ref = await queue_ref(queue)
    flow = await read_flow(ref, job_id, found["depth"], found["max_children"], PAGE_NODES)
    return render(request, "bullpen/_flow_tree.html", {"flow": flow})
