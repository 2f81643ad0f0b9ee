"""The decorators every view goes through: ``api_view`` (JSON reads), ``page_view`` (HTML
pages) and ``mutation_view`` (actions, composed of the named steps of
:mod:`dashboard.auth.mutation_steps`): access checks, read-only, cross-site defence, audit, and
queue-layer errors as HTTP statuses (:mod:`dashboard.auth.answers`)."""

from __future__ import annotations

import functools
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.translation import gettext

from dashboard.api import request_body
from dashboard.auth import lockout, queue_access
from dashboard.auth.access import allows, anyone, read_check
from dashboard.auth.answers import (
    REALM,
    HiddenQueue,
    NotAllowed,
    View,
    error_answer,
    json_error,
    kept_private,
    method_not_allowed,
    refusal_of,
    status_of,
)
from dashboard.auth.mutation_steps import mutation_view
from dashboard.auth.principal import from_request
from dashboard.auth.queue_lookup import canonical_url, hidden_queue, unknown_queue, url_queue
from dashboard.pages import notices
from queues.errors import BullpenError
from queues.redis.errors import translate_redis_errors

__all__ = [
    "REALM",
    "HiddenQueue",
    "NotAllowed",
    "View",
    "api_view",
    "json_error",
    "mutation_view",
    "page_view",
    "status_of",
]


def api_view(view: View) -> View:
    """GET-only JSON view: read check, then errors as ``{"error": ...}`` with their status."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method not in ("GET", "HEAD"):
            return method_not_allowed("GET, HEAD")
        check = read_check()
        if check is not anyone or queue_access.restricted():
            # Open reads need nobody's credentials: none are checked (and hashed) for them,
            # unless what they may read depends on who they are.
            principal = await from_request(request)
            if principal.locked_out:
                return lockout.json_answer(request)
            if not await allows(check, principal):
                return json_error(*refusal_of(principal))
        # Another spelling goes to the queue's one name whether or not it may be viewed: the
        # name alone tells nothing, and a hidden queue then answers as a missing one does.
        moved = canonical_url(request)
        if moved is not None:
            return HttpResponseRedirect(moved)
        try:
            if await hidden_queue(request, kwargs) is not None:
                raise unknown_queue(str(url_queue(request, kwargs)))
            async with translate_redis_errors():
                return await view(request, *args, **kwargs)
        except BullpenError as error:
            return error_answer(error)
        except (SuspiciousOperation, BadRequest) as error:
            return json_error(*request_body.refusal(error))

    return kept_private(wrapper)


def page_view(view: View) -> View:
    """GET-only HTML view: read check (anonymous users go to the site's login), then errors
    rendered on the error page."""

    @functools.wraps(view)
    async def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse("Method not allowed", status=405, content_type="text/plain")
            response["Allow"] = "GET, HEAD"
            return response
        principal = await from_request(request)
        if principal.locked_out:
            return lockout.page_answer(request)
        if not await allows(read_check(), principal):
            message, status = refusal_of(principal)
            if status == 401 and not principal.bad_credentials:
                return redirect_to_login(request.get_full_path())
            response = render(
                request,
                "bullpen/error.html",
                {"message": gettext(message), "status": status},
                status=status,
            )
            if status == 401:
                response["WWW-Authenticate"] = REALM
            notices.finish(request, response)
            return response
        moved = canonical_url(request)
        if moved is not None:
            return HttpResponseRedirect(moved)
        request.bullpen_principal = principal  # type: ignore[attr-defined]
        page: HttpResponseBase
        try:
            if await hidden_queue(request, kwargs) is not None:
                raise unknown_queue(str(url_queue(request, kwargs)))
            async with translate_redis_errors():
                page = await view(request, *args, **kwargs)
        except BullpenError as error:
            status = status_of(error)
            page = render(
                request,
                "bullpen/error.html",
                {"message": str(error), "status": status},
                status=status,
            )
        notices.finish(request, page)
        return page

    return kept_private(wrapper)
