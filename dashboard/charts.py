"""Throughput and failure rate per queue: the API route and the page fragments."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.actions_api import queue_ref
from dashboard.guards import api_view, page_view
from queues.errors import BadParameter
from queues.throughput import WINDOWS, series


def _window(request: HttpRequest) -> str:
    window = request.GET.get("window", "hour")
    if window not in WINDOWS:
        raise BadParameter(f"window must be one of: {', '.join(WINDOWS)}")
    return window


@api_view
async def throughput_api(request: HttpRequest, queue: str) -> JsonResponse:
    return JsonResponse(await series(await queue_ref(queue), _window(request)))


@page_view
async def throughput_fragment(request: HttpRequest, queue: str) -> HttpResponse:
    window = _window(request)
    data = await series(await queue_ref(queue), window)
    size = request.GET.get("size", "large")
    return render(
        request,
        "bullpen/_throughput.html",
        {"data": data, "window": window, "small": size == "small"},
    )
