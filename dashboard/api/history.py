"""The history API: a queue's series over a range and its per-job-name table (JSON)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse

from dashboard.auth.guards import api_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.forms.answer import valid
from dashboard.forms.history import HistoryRangeForm
from queues.history.model import HistorySeries, NamesTable, Percentiles
from queues.history.read import read_history, read_names


def percentiles_json(found: Percentiles) -> dict[str, float | None]:
    return {"p50": found.p50, "p95": found.p95, "p99": found.p99}


def history_json(series: HistorySeries) -> dict[str, Any]:
    totals = series.totals
    return {
        "queue": series.queue,
        "range": series.range,
        "step_s": series.step_s,
        "points": [
            {
                "t": point.t,
                "completed": point.completed,
                "failed": point.failed,
                "retried": point.retried,
                "stalled": point.stalled,
                "wait_ms": percentiles_json(point.wait_ms),
                "run_ms": percentiles_json(point.run_ms),
            }
            for point in series.points
        ],
        "totals": {
            "completed": totals.completed,
            "failed": totals.failed,
            "retried": totals.retried,
            "stalled": totals.stalled,
            "failure_rate": totals.failure_rate,
            "wait_ms": percentiles_json(totals.wait_ms),
            "run_ms": percentiles_json(totals.run_ms),
        },
        "oldest_waiting_ms": series.oldest_waiting_ms,
    }


def names_json(table: NamesTable) -> dict[str, Any]:
    return {
        "queue": table.queue,
        "range": table.range,
        "folded_names": table.folded_names,
        "names": [
            {
                "name": row.name,
                "completed": row.completed,
                "failed": row.failed,
                "retried": row.retried,
                "stalled": row.stalled,
                "failure_rate": row.failure_rate,
                "wait_ms": percentiles_json(row.wait_ms),
                "run_ms": percentiles_json(row.run_ms),
                "slowest": [{"id": slow.id, "run_ms": slow.run_ms} for slow in row.slowest],
            }
            for row in table.names
        ],
    }


@api_view
async def history_api(request: HttpRequest, queue: str) -> JsonResponse:
    range_name = valid(HistoryRangeForm(request.GET)).cleaned_data["range"]
    return JsonResponse(history_json(await read_history(await queue_ref(queue), range_name)))


@api_view
async def names_api(request: HttpRequest, queue: str) -> JsonResponse:
    range_name = valid(HistoryRangeForm(request.GET)).cleaned_data["range"]
    return JsonResponse(names_json(await read_names(await queue_ref(queue), range_name)))
