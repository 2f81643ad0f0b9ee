"""Throughput and failure rate per queue: the API route and the page fragments."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.auth.guards import api_view, page_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.forms.answer import valid
from dashboard.forms.reads import ThroughputForm
from queues.throughput.rates import series


@api_view
async def throughput_api(request: HttpRequest, queue: str) -> JsonResponse:
    window = valid(ThroughputForm(request.GET)).cleaned_data["window"]
    return JsonResponse(await series(await queue_ref(queue), window, failed_set=True))


@page_view
async def throughput_fragment(request: HttpRequest, queue: str) -> HttpResponse:
    found = valid(ThroughputForm(request.GET)).cleaned_data
    data = await series(await queue_ref(queue), found["window"], failed_set=True)
    return render(
        request,
        "bullpen/_throughput.html",
        {"data": data, "window": found["window"], "small": found["size"] == "small"},
    )
