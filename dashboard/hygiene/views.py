"""A queue's hygiene: the info API (its meta hash, what it keeps, warnings) and the queue
page's section, both from one pipelined read."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import translation

from dashboard.auth.guards import api_view, page_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.hygiene.texts import text
from queues.hygiene.info import queue_info


@api_view
async def info_api(request: HttpRequest, queue: str) -> JsonResponse:
    info = await queue_info(await queue_ref(queue))
    body = info.as_json()
    # The API stays English, whatever the request's language.
    with translation.override("en"):
        for shown, warning in zip(body["warnings"], info.warnings, strict=True):
            shown["text"] = text(warning)
    return JsonResponse(body)


@page_view
async def section(request: HttpRequest, queue: str) -> HttpResponse:
    """The queue page's *Hygiene* section: the figures and each warning in words."""
    ref = await queue_ref(queue)
    info = await queue_info(ref)
    shown: dict[str, Any] = info.as_json()
    context = {
        "queue": {"slug": ref.slug, "name": ref.name},
        "info": shown,
        "warnings": [
            {"code": warning.code, "option": warning.option, "text": text(warning)}
            for warning in info.warnings
        ],
    }
    return render(request, "bullpen/_hygiene.html", context)
