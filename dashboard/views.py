"""The HTML pages: overview, one queue's jobs by state, one job."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.guards import page_view
from dashboard.job_view import dead_letter_context, page_context, shown
from dashboard.params import page_params
from dashboard.serializers import queue_json
from dashboard.viewer import can_act_on, viewer_kind
from queues.alerts import evaluate
from queues.conf import get_config
from queues.counts import summaries, summary
from queues.detail import job_detail
from queues.discovery import known
from queues.errors import QueueNotFound
from queues.keys import STATES, QueueRef
from queues.listing import job_page as read_job_page
from queues.recent import finished_since

# Tabs of the queue page; ``paused`` only matters for BullMQ 5 queues and shows when non-empty.
STATE_TABS = [s for s in STATES if s != "paused"]
PAGE_SIZES = (10, 20, 50, 100, 300)


@page_view
async def overview(request: HttpRequest) -> HttpResponse:
    found = await summaries()
    queues = [queue_json(s) for s in found]
    recent = await finished_since([s.ref for s in found], 3600)
    alerts = {
        s.ref.slug: [a.as_json() for a in evaluate(s, recent[s.ref]["failed"])] for s in found
    }
    totals = {state: sum(q["counts"][state] for q in queues) for state in STATES}
    return render(
        request,
        "bullpen/overview.html",
        {"queues": queues, "states": STATE_TABS, "totals": totals, "alerts": alerts},
    )


@page_view
async def queue_page(request: HttpRequest, queue: str) -> HttpResponse:
    ref = QueueRef.from_slug(queue)
    if not await known(ref):
        raise QueueNotFound(f"Unknown queue {queue!r}")
    info = queue_json(await summary(ref))
    default_state = next((s for s in STATE_TABS if info["counts"][s]), "waiting")
    state, page, per_page, order = page_params(request.GET, default_state)
    result = await read_job_page(ref, state, page, per_page, order)
    tabs = [s for s in STATE_TABS] + (["paused"] if info["counts"]["paused"] else [])
    kind = await viewer_kind(request.bullpen_principal)  # type: ignore[attr-defined]
    can_act = can_act_on(kind, ref.slug)
    return render(
        request,
        "bullpen/queue.html",
        {
            "queue": info,
            "tabs": tabs,
            "state": state,
            "result": result,
            "page_sizes": PAGE_SIZES,
            "viewer": kind,
            "can_act": can_act,
            "selectable": can_act,
            "live_spec": json.dumps(
                {
                    "watch": "queue",
                    "queue": ref.slug,
                    "state": state,
                    "page": result.page,
                    "per_page": result.per_page,
                    "order": result.order,
                }
            ),
        },
    )


@page_view
async def job_page(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    ref = QueueRef.from_slug(queue)
    job = await job_detail(ref, job_id)
    kind = await viewer_kind(request.bullpen_principal)  # type: ignore[attr-defined]
    context = page_context(ref, job, viewer=kind)
    context["dead_letter"] = await dead_letter_context(ref, job)
    return render(request, "bullpen/job.html", context)


@page_view
async def edit_data_form(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    """The "Edit data" form, loaded when opened: the actions stay light and live-renderable."""
    ref = QueueRef.from_slug(queue)
    job = await job_detail(ref, job_id, log_lines=1)
    cap = int(get_config()["DETAIL_FIELD_CAP"])
    context = {"queue": {"slug": ref.slug}, "job": job, "data": shown(job["data"], cap)}
    return render(request, "bullpen/_job_edit_data.html", context)
