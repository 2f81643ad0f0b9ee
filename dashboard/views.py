"""The HTML pages: overview, one queue's jobs by state, one job."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.forms.answer import valid
from dashboard.forms.reads import PAGE_SIZES, OverviewRowsForm, job_page_params
from dashboard.guards import page_view
from dashboard.job_view import dead_letter_context, page_context, shown
from dashboard.serializers import queue_json
from dashboard.viewer import can_act_on, sign_kind, viewer_kind
from queues.alerts import read_alerts
from queues.conf import default_prefix, get_config
from queues.counts import QueueSummary, summaries, summary
from queues.detail import job_detail
from queues.discovery import known
from queues.errors import BullpenError, QueueNotFound
from queues.keys import STATES, QueueRef
from queues.listing import job_page as read_job_page

# Tabs of the queue page; ``paused`` only matters for BullMQ 5 queues and shows when non-empty.
STATE_TABS = [s for s in STATES if s != "paused"]


async def _overview_context(found: list[QueueSummary]) -> dict[str, Any]:
    queues = [queue_json(s) for s in found]
    firing = await read_alerts(found)
    alerts = {ref.slug: [alert.as_json() for alert in firing[ref]] for ref in firing}
    return {
        "queues": queues,
        "states": STATE_TABS,
        "alerts": alerts,
        "first_prefix": default_prefix(),
    }


@page_view
async def overview(request: HttpRequest) -> HttpResponse:
    context = await _overview_context(await summaries())
    queues = context["queues"]
    context["totals"] = {state: sum(q["counts"][state] for q in queues) for state in STATES}
    return render(request, "bullpen/overview.html", context)


@page_view
async def overview_rows(request: HttpRequest) -> HttpResponse:
    """Rows of the overview for queues an open overview has not got yet (``?q=<slug>``...)."""
    refs = []
    for slug in valid(OverviewRowsForm(request.GET)).cleaned_data["q"]:
        try:
            ref = QueueRef.from_slug(slug)
        except BullpenError:
            continue
        if await known(ref):
            refs.append(ref)
    found = [await summary(ref) for ref in refs]
    return render(request, "bullpen/_overview_rows.html", await _overview_context(found))


@page_view
async def queue_page(request: HttpRequest, queue: str) -> HttpResponse:
    ref = QueueRef.from_slug(queue)
    if not await known(ref):
        raise QueueNotFound(f"Unknown queue {queue!r}")
    info = queue_json(await summary(ref))
    default_state = next((s for s in STATE_TABS if info["counts"][s]), "waiting")
    state, page, per_page, order = job_page_params(request.GET, default_state)
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
                    "viewer": sign_kind(kind),
                }
            ),
        },
    )


@page_view
async def job_page(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    ref = QueueRef.from_slug(queue)
    # Fields cut inside Redis at what the page shows; "Download JSON" has the whole job.
    job = await job_detail(ref, job_id, cap=int(get_config()["DETAIL_FIELD_CAP"]))
    kind = await viewer_kind(request.bullpen_principal)  # type: ignore[attr-defined]
    context = page_context(ref, job, viewer=kind)
    context["dead_letter"] = await dead_letter_context(ref, job)
    return render(request, "bullpen/job.html", context)


@page_view
async def edit_data_form(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    """The "Edit data" form, loaded when opened: the actions stay light and live-renderable."""
    ref = QueueRef.from_slug(queue)
    cap = int(get_config()["DETAIL_FIELD_CAP"])
    job = await job_detail(ref, job_id, log_lines=1, cap=cap)
    data = shown(job["data"], cap, job["truncated"].get("data"))
    context = {"queue": {"slug": ref.slug}, "job": job, "data": data}
    return render(request, "bullpen/_job_edit_data.html", context)
