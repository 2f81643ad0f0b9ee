"""A job's flow from its root: as JSON, and as the tree the job page loads.

A flow may cross queues; a node in a queue the user may not view (QUEUE_ACCESS) is shown as
hidden, with none of its data, and the tree goes on below it."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.auth.guards import api_view, page_view
from dashboard.auth.queue_access import QueueAccess, for_request
from dashboard.auth.queue_lookup import queue_ref
from dashboard.forms.answer import valid
from dashboard.forms.flow import FlowForm
from queues.reads.flow import read_flow

# The job page's tree: at most this many nodes (breadth first) and children of one parent,
# unless the page's address asks otherwise; the rest are counted under their parents. A
# page longer than this is not read, and each node costs its read (about 15 commands).
PAGE_NODES = 200
PAGE_CHILDREN = 20


@api_view
async def flow_api(request: HttpRequest, queue: str, job_id: str) -> JsonResponse:
    found = valid(FlowForm(request.GET)).cleaned_data
    flow = await read_flow(await queue_ref(queue), job_id, found["depth"], found["max_children"])
    return JsonResponse(seen_by(await for_request(request), flow))


@page_view
async def flow_fragment(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    found = valid(FlowForm({"max_children": PAGE_CHILDREN, **request.GET.dict()})).cleaned_data
    ref = await queue_ref(queue)
    flow = await read_flow(ref, job_id, found["depth"], found["max_children"], PAGE_NODES)
    flow = seen_by(await for_request(request), flow)
    return render(request, "bullpen/_flow_tree.html", {"flow": flow})


def seen_by(access: QueueAccess, flow: dict[str, Any]) -> dict[str, Any]:
    """``flow`` with every node of a queue ``access`` may not view reduced to its place."""
    if not access.restricted:
        return flow
    return {**flow, "root": _node_seen_by(access, flow["root"])}


def _node_seen_by(access: QueueAccess, node: dict[str, Any]) -> dict[str, Any]:
    children = [_node_seen_by(access, child) for child in node.get("children") or ()]
    if access.may_view(str(node.get("queue", ""))):
        return {**node, "children": children} if "children" in node else node
    return {"hidden": True, "children": children}
