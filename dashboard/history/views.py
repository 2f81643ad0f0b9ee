"""A queue's history: its own page (any range, the job names in any order) and the section
the queue page opens, both rendered from one template."""

from __future__ import annotations

import time
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext, gettext_lazy

from dashboard.api.serializers import queue_json
from dashboard.auth.guards import page_view
from dashboard.forms.answer import valid
from dashboard.forms.history import HistoryForm
from dashboard.history.charts import history_charts
from dashboard.history.names import headings, sorted_rows
from dashboard.history.scales import duration_text, percent_text
from queues.errors import QueueNotFound
from queues.history.model import HistorySeries, NamesTable, Percentiles
from queues.history.read import read_history, read_names
from queues.history.storage import FOLDED_NAME, NAME_CAP
from queues.reads.counts import summary
from queues.reads.discovery import known
from queues.reads.keys import QueueRef
from queues.reads.store import on_redis

# The ranges the switcher offers, with what each link says.
SWITCHER = (
    ("1h", gettext_lazy("1 hour")),
    ("24h", gettext_lazy("24 hours")),
    ("7d", gettext_lazy("7 days")),
    ("30d", gettext_lazy("30 days")),
    ("90d", gettext_lazy("90 days")),
)


def _labels(kind: str) -> dict[str, str]:
    """What each percentile of ``kind`` is called, once a page rather than once a cell."""
    if kind == "wait":
        return {q: gettext("Wait %(q)s") % {"q": q} for q in ("p50", "p95", "p99")}
    return {q: gettext("Run %(q)s") % {"q": q} for q in ("p50", "p95", "p99")}


def _figures(found: Percentiles, labels: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {"q": q, "label": labels[q], "value": value, "text": duration_text(value)}
        for q, value in (("p50", found.p50), ("p95", found.p95), ("p99", found.p99))
    ]


def history_context(
    ref: QueueRef, series: HistorySeries, names: NamesTable, sort: str, now_ms: int
) -> dict[str, Any]:
    totals = series.totals
    wait_labels, run_labels = _labels("wait"), _labels("run")
    rows = [
        {
            "row": row,
            "runs": row.completed + row.failed,
            "folded": names.folded_names and row.name == FOLDED_NAME,
            "rate": percent_text(row.failure_rate),
            "wait": _figures(row.wait_ms, wait_labels),
            "run": _figures(row.run_ms, run_labels),
            "slowest": [
                {"id": job.id, "run_ms": job.run_ms, "text": duration_text(job.run_ms)}
                for job in row.slowest
            ],
        }
        for row in sorted_rows(names.names, sort)
    ]
    return {
        "queue": {"slug": ref.slug, "name": ref.name},
        "range": series.range,
        "ranges": SWITCHER,
        "sort": sort,
        "headings": headings(sort, series.range),
        "charts": history_charts(series, now_ms),
        "totals": totals,
        "finished": totals.completed + totals.failed,
        "failure_rate": percent_text(totals.failure_rate),
        "wait": _figures(totals.wait_ms, wait_labels),
        "run": _figures(totals.run_ms, run_labels),
        "oldest": {
            "value": series.oldest_waiting_ms,
            "text": duration_text(series.oldest_waiting_ms),
        },
        "rows": rows,
        "folded": names.folded_names,
        "name_cap": NAME_CAP,
    }


async def _read(request: HttpRequest, queue: str) -> dict[str, Any]:
    ref = QueueRef.from_slug(queue)
    if not await known(ref):
        raise QueueNotFound(f"Unknown queue {queue!r}")
    found = valid(HistoryForm(request.GET)).cleaned_data
    range_name = found["range"]
    now_ms = int(time.time() * 1000)
    series = await read_history(ref, range_name, now_ms)
    names = await read_names(ref, range_name, now_ms)
    return history_context(ref, series, names, found["sort"], now_ms)


def _needs_redis(ref: QueueRef) -> dict[str, Any] | None:
    """History is recorded in Redis alone: a store queue's page says so instead."""
    return None if on_redis([ref]) else {"feature": "history", "queue": {"slug": ref.slug}}


@page_view
async def history_page(request: HttpRequest, queue: str) -> HttpResponse:
    ref = QueueRef.from_slug(queue)
    if (note := _needs_redis(ref)) is not None and await known(ref):
        note["queue"] = queue_json(await summary(ref))
        return render(request, "bullpen/history.html", note)
    context = await _read(request, queue)
    # The header's name as the queue page writes it (a configured display name).
    context["queue"] = queue_json(await summary(QueueRef.from_slug(queue)))
    return render(request, "bullpen/history.html", context)


@page_view
async def history_section(request: HttpRequest, queue: str) -> HttpResponse:
    """The queue page's History section, read when it is opened."""
    note = _needs_redis(QueueRef.from_slug(queue))
    if note is not None:
        return render(request, "bullpen/_needs_redis.html", note)
    context = await _read(request, queue)
    context["embedded"] = True
    return render(request, "bullpen/_history.html", context)
