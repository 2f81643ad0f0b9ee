"""Decorators every view goes through: the read check, and queue-layer errors as HTTP statuses."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboard.access import can_read
from queues.errors import (
    BadParameter,
    BullpenError,
    JobNotFound,
    QueueDataError,
    QueueNotFound,
    RedisUnavailable,
)

View = Callable[..., Coroutine[Any, Any, HttpResponse]]

STATUS_OF: dict[type[BullpenError], int] = {
    BadParameter: 400,
    QueueNotFound: 404,
    JobNotFound: 404,
    QueueDataError: 422,
    RedisUnavailable: 503,
}


def status_of(error: BullpenError) -> int:
    return next((code for kind, code in STATUS_OF.items() if isinstance(error, kind)), 500)


def json_error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


def api_view(view: View) -> View:
    """GET-only JSON view: read check, then errors as ``{"error": ...}`` with their status."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = json_error("Method not allowed", 405)
            response["Allow"] = "GET, HEAD"
            return response
        if not await can_read(request):
            return json_error("Forbidden", 403)
        try:
            return await view(request, *args, **kwargs)
        except BullpenError as error:
            return json_error(str(error), status_of(error))

    return wrapper


def page_view(view: View) -> View:
    """GET-only HTML view: read check, then errors rendered on the error page."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse("Method not allowed", status=405, content_type="text/plain")
            response["Allow"] = "GET, HEAD"
            return response
        if not await can_read(request):
            return render(request, "bullpen/error.html", {"message": "Forbidden"}, status=403)
        try:
            return await view(request, *args, **kwargs)
        except BullpenError as error:
            status = status_of(error)
            return render(
                request,
                "bullpen/error.html",
                {"message": str(error), "status": status},
                status=status,
            )

    return wrapper
