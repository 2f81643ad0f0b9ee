"""The HTML pages: overview, one queue's jobs by state, one job."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext

from dashboard.alerts.section import alerts_context
from dashboard.api.serializers import queue_json
from dashboard.auth.guards import page_view
from dashboard.auth.queue_access import for_request
from dashboard.auth.queue_lookup import queue_ref
from dashboard.auth.viewer import can_act_on, kind_on_queue, sign_kind, viewer_kind
from dashboard.bulk.launch import running_bar
from dashboard.forms import preferences
from dashboard.forms.answer import valid
from dashboard.forms.reads import PAGE_SIZES, OverviewForm, job_page_params
from dashboard.health import views as health
from dashboard.history.overview_columns import add_history_columns
from dashboard.live.reader_counts import ReaderCounts
from dashboard.pages import relatives, triage
from dashboard.pages.htmx import htmx
from dashboard.pages.job_context import (
    dead_letter_context,
    dedup_hold,
    live_context,
    page_context,
    shown,
)
from dashboard.pages.overview_list import (
    COLUMNS,
    GROUPING_LABELS,
    HISTORY_COLUMNS,
    PER_PAGE_CHOICES,
    SORT_CHOICES,
)
from dashboard.pages.overview_page import read_listing
from dashboard.pages.state_labels import state_label
from queues.config.settings import default_prefix, get_config
from queues.errors import JobGone
from queues.failures.failure_groups import GroupReport
from queues.postgres.store_actions import supported
from queues.reads.counts import summary
from queues.reads.detail import job_detail
from queues.reads.keys import STATES, QueueRef
from queues.reads.listing import job_page as read_job_page
from queues.reads.pause_reasons import pause_reasons
from queues.redis import connections
from queues.throughput.rates import series

# Tabs of the queue page; ``paused`` only matters for BullMQ 5 queues and shows when non-empty.
STATE_TABS = [s for s in STATES if s != "paused"]


def _sort_choices(current: str) -> list[tuple[str, str]]:
    """The order menu, holding the current order even when a column heading chose it."""
    choices: list[tuple[str, str]] = [(key, str(label)) for key, label in SORT_CHOICES]
    if current not in dict(choices):
        state = state_label(current.lstrip("-"))
        if current.startswith("-"):
            label = gettext("Most %(state)s") % {"state": state}
        else:
            label = gettext("Fewest %(state)s") % {"state": state}
        choices.append((current, label))
    return choices


async def _overview(request: HttpRequest) -> dict[str, Any]:
    access = await for_request(request)
    listing = await read_listing(
        valid(OverviewForm(preferences.overview_query(request))).query(), access=access
    )
    await add_history_columns(listing.queues, listing.query.columns)
    kind = await viewer_kind(request.bullpen_principal)  # type: ignore[attr-defined]
    return {
        "listing": listing,
        "query": listing.query,
        "states": COLUMNS,
        "first_prefix": default_prefix(),
        # With several Redis connections each row names its own.
        "several_connections": connections.several(),
        # A store that cannot be read is named for what it is.
        "postgres_stores": connections.postgres_names(),
        # PostgreSQL stores alone: the page says which features are off.
        "without_redis": not connections.state_on_redis(),
        "default_delimiter": get_config()["GROUP_DELIMITER"],
        # Grouping by connection is offered when there is more than one.
        "groupings": [
            (value, label)
            for value, label in GROUPING_LABELS
            if value != "connection" or connections.several()
        ],
        "per_page_choices": PER_PAGE_CHOICES,
        "history_choices": HISTORY_COLUMNS,
        "history_columns": [(k, v) for k, v in HISTORY_COLUMNS if k in listing.query.columns],
        "sort_choices": _sort_choices(listing.query.sort),
        # Group actions: each queue's own read-only setting is checked again when acting.
        "can_act": can_act_on(kind, ""),
        # The socket resumes from the version of the counts shown (reader_counts.py).
        "live_spec": json.dumps(
            {"watch": "overview", "since": listing.live_version}
            if listing.live_version
            else {"watch": "overview"}
        ),
    }


@page_view
async def overview(request: HttpRequest) -> HttpResponse:
    # The filter, the order and the pager swap only the list (htmx); the page is the same.
    if htmx(request).target == "overview-list":
        return render(request, "bullpen/_overview_list.html", await _overview(request))
    # The Redis panel comes with the page, read beside its list: one request fewer. A server
    # found down moments ago is not waited on (queues/redis/health.py).
    context, panel = await asyncio.gather(_overview(request), health.panel_context(request))
    return render(request, "bullpen/overview.html", {**context, "redis_panel": panel})


@page_view
async def overview_rows(request: HttpRequest) -> HttpResponse:
    """The rows of one opened group (``?group=head&within=t0042``), as the overview renders them."""
    return render(request, "bullpen/_overview_rows.html", await _overview(request))


@page_view
async def queue_page(request: HttpRequest, queue: str) -> HttpResponse:
    ref = await queue_ref(queue)
    info = queue_json(await summary(ref))
    if info["paused"]:
        info["pauseReason"] = (await pause_reasons([ref])).get(ref)
    default_state = next((s for s in STATE_TABS if info["counts"][s]), "waiting")
    state, page, per_page, order = job_page_params(preferences.queue_query(request), default_state)
    # Taken before the list is read: an event between the two makes the socket read it again.
    list_at = ReaderCounts().list_position(ref)
    # The alerts and the throughput chart come with the page, above its list: loaded after it,
    # they pushed the list down under a person's click.
    result, alerts, throughput, groups, bulk_bar = await asyncio.gather(
        read_job_page(ref, state, page, per_page, order),
        alerts_context(request, ref),
        series(ref, "hour", failed_set=True),
        _failure_groups(ref, state, info["counts"].get("failed", 0)),
        running_bar(ref),
    )
    tabs = [s for s in STATE_TABS] + (["paused"] if info["counts"]["paused"] else [])
    kind = await kind_on_queue(request, ref.slug)
    can_act = can_act_on(kind, ref.slug)
    return render(
        request,
        "bullpen/queue.html",
        {
            "queue": info,
            "several_connections": connections.several(),
            "tabs": tabs,
            "state": state,
            "result": result,
            "page_sizes": PAGE_SIZES,
            "viewer": kind,
            "can_act": can_act,
            "supports": supported(ref),
            "selectable": can_act,
            "alerts": alerts,
            "throughput": throughput,
            "groups": groups,
            "bulk_bar": bulk_bar,
            "live_spec": json.dumps(
                {
                    "watch": "queue",
                    "queue": ref.slug,
                    "state": state,
                    "page": result.page,
                    "per_page": result.per_page,
                    "order": result.order,
                    "viewer": sign_kind(kind),
                    "list_at": list_at,
                }
            ),
        },
    )


async def _failure_groups(ref: QueueRef, state: str, failed: int) -> GroupReport | None:
    """The failed tab's groups, when they come in time to show above its list."""
    if state != "failed" or not failed:
        return None
    return await triage.groups_in_time(ref)


@page_view
async def job_page(request: HttpRequest, queue: str, job_id: str) -> HttpResponse:
    ref = QueueRef.from_slug(queue)
    kind = await kind_on_queue(request, ref.slug)
    try:
        # Fields cut inside Redis at what the page shows; "Download JSON" has the whole job.
        job = await job_detail(ref, job_id, cap=int(get_config()["DETAIL_FIELD_CAP"]))
    except JobGone:
        # A removed job's page (Back after Remove, an old link) says so and leads to its
        # queue, as the open page says when the job goes while it is shown.
        gone = live_context(ref, {"id": job_id, "state": "removed"}, viewer=kind)
        return render(request, "bullpen/job_gone.html", gone, status=404)
    job = relatives.seen_by(await for_request(request), job)
    context = page_context(ref, job, viewer=kind)
    context["dead_letter"] = await dead_letter_context(ref, job)
    context["dedup"] = await dedup_hold(ref, job)
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
