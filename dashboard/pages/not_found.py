"""The answer to a URL under the mount that no route takes: the dashboard's own 404 page, or
``{"error": ...}`` under ``api/``. The last route of ``dashboard.urls``, so it works at any
prefix without the host site's ``handler404``."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import Resolver404, resolve
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt

from dashboard.auth.guards import api_view, json_error, page_view


@page_view
async def _page(request: HttpRequest, rest: str) -> HttpResponse:
    message = gettext("Nothing here: %(path)s is not a page of this dashboard.") % {
        "path": request.path
    }
    return render(request, "bullpen/error.html", {"message": message, "status": 404}, status=404)


@api_view
async def _api(request: HttpRequest, rest: str) -> HttpResponseBase:
    return json_error(f"No API route at {request.path}", 404)


@csrf_exempt  # changes nothing; a POST to a mistyped action should learn it is a 404
async def not_found(request: HttpRequest, rest: str) -> HttpResponseBase:
    is_api = rest == "api" or rest.startswith("api/")
    if request.method not in ("GET", "HEAD"):
        if is_api:
            return json_error(f"No API route at {request.path}", 404)
        return HttpResponse("Not found", status=404, content_type="text/plain")
    slashed = _with_slash(request)
    if slashed is not None:
        return slashed
    return await (_api if is_api else _page)(request, rest)


def _with_slash(request: HttpRequest) -> HttpResponseBase | None:
    """CommonMiddleware's APPEND_SLASH redirect, which this catch-all route would otherwise
    defeat (every path now resolves)."""
    if not settings.APPEND_SLASH or request.path_info.endswith("/"):
        return None
    try:
        match = resolve(request.path_info + "/", getattr(request, "urlconf", None))
    except Resolver404:
        return None
    if match.func is not_found:
        return None
    return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
