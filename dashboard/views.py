"""The HTML pages: overview, one queue's jobs by state, one job."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.access import is_read_only
from dashboard.guards import page_view
from dashboard.params import page_params
from dashboard.serializers import queue_json
from queues.alerts import evaluate
from queues.conf import get_config
from queues.counts import summaries, summary
from queues.detail import job_detail
from queues.discovery import known
from queues.errors import QueueNotFound
from queues.job_fields import job_duration_ms
from queues.keys import STATES, QueueRef
from queues.listing import job_page as read_job_page
from queues.recent import finished_since
from queues.runner.dead_letter import dead_letter_ref

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
    for row in result.jobs:
        row["duration"] = job_duration_ms(row)
    return render(
        request,
        "bullpen/queue.html",
        {
            "queue": info,
            "tabs": tabs,
            "state": state,
            "result": result,
            "page_sizes": PAGE_SIZES,
            "has_prev": result.page > 1,
            "has_next": result.page < result.pages,
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


def _shown(value: Any, cap: int) -> dict[str, Any]:
    """A JSON value ready for the page: the tree when small enough, else its cut text."""
    text = json.dumps(value, indent=2, ensure_ascii=False) if not isinstance(value, str) else value
    if len(text) > cap:
        return {"tree": None, "text": text[:cap], "size": len(text), "cut": True}
    return {"tree": value, "text": text, "size": len(text), "cut": False}


@page_view
async def job_page(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    ref = QueueRef.from_slug(queue)
    job = await job_detail(ref, job_id)
    cap = int(get_config()["DETAIL_FIELD_CAP"])
    return render(
        request,
        "bullpen/job.html",
        {
            "queue": {"slug": ref.slug, "name": ref.name, "prefix": ref.prefix},
            "job": job,
            "read_only": is_read_only(ref.slug),
            "is_dead_letter": ref == dead_letter_ref(),
            "live_spec": json.dumps({"watch": "job", "queue": ref.slug, "id": job_id}),
            "data": _shown(job["data"], cap),
            "opts": _shown(job["opts"], cap),
            "returnvalue": _shown(job["returnvalue"], cap),
            "progress": job["progress"],
            "duration": job_duration_ms(job),
            "stacktrace": [str(frame)[:cap] for frame in (job["stacktrace"] or [])]
            if isinstance(job["stacktrace"], list)
            else [str(job["stacktrace"])[:cap]],
            "progress_structured": isinstance(job["progress"], (dict, list)),
            # "Copy as JSON" holds the job in the page; a huge one is downloaded instead.
            "copy_json": job if len(json.dumps(job, ensure_ascii=False)) <= cap else None,
        },
    )
