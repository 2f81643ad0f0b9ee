"""A job's flow from its root: as JSON, and as the tree the job page loads."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.actions_api import queue_ref
from dashboard.forms.answer import valid
from dashboard.forms.flow import FlowForm
from dashboard.guards import api_view, page_view
from queues.flow import read_flow


@api_view
async def flow_api(request: HttpRequest, queue: str, job_id: str) -> JsonResponse:
    found = valid(FlowForm(request.GET)).cleaned_data
    flow = await read_flow(await queue_ref(queue), job_id, found["depth"], found["max_children"])
    return JsonResponse(flow)


@page_view
async def flow_fragment(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    found = valid(FlowForm(request.GET)).cleaned_data
    flow = await read_flow(await queue_ref(queue), job_id, found["depth"], found["max_children"])
    return render(request, "bullpen/_flow_tree.html", {"flow": flow})
