"""The answer to a client locked out after too many failed sign-ins: 429 with ``Retry-After``.

Bullpen's views answer so (JSON for the API and actions, the error page for pages).
:func:`lockout_response` is the same answer for django-axes' middleware, which replaces the
response of any request whose sign-in it locked out (the admin's login included): set
``AXES_LOCKOUT_CALLABLE = "dashboard.lockout.lockout_response"``.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.translation import gettext, ngettext

STATUS = 429
Answer = TypeVar("Answer", bound=HttpResponse)


def retry_after(request: HttpRequest) -> int | None:
    """Seconds until the lockout ends: axes' cool-off, which each refused attempt restarts
    (``AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT``, on by default); None when it lasts
    until someone lifts it."""
    if getattr(settings, "AXES_COOLOFF_TIME", None) is None:
        return None
    from axes.helpers import get_cool_off  # axes is set up: it locked this client out

    cool_off = get_cool_off(request)
    return None if cool_off is None else max(1, math.ceil(cool_off.total_seconds()))


def message(seconds: int | None) -> str:
    """The refusal in the active language (pages); the API answers in English."""
    if seconds is None:
        return gettext("Too many failed sign-ins: an administrator has to lift the lockout.")
    if seconds < 60:
        return gettext("Too many failed sign-ins: try again in %(n)s s.") % {"n": seconds}
    minutes = math.ceil(seconds / 60)
    return ngettext(
        "Too many failed sign-ins: try again in %(n)s minute.",
        "Too many failed sign-ins: try again in %(n)s minutes.",
        minutes,
    ) % {"n": minutes}


def json_answer(request: HttpRequest) -> JsonResponse:
    seconds = retry_after(request)
    with translation.override(None):
        response = JsonResponse({"error": message(seconds)}, status=STATUS)
    return _answered(request, response, seconds)


def page_answer(request: HttpRequest) -> HttpResponse:
    seconds = retry_after(request)
    response = render(
        request,
        "bullpen/error.html",
        {"message": message(seconds), "status": STATUS},
        status=STATUS,
    )
    return _answered(request, response, seconds)


def lockout_response(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: the answer a Bullpen view gave, or for any other view (the
    admin's login) a page for browsers and JSON for the rest."""
    # Axes passes (request, response, credentials) or, from async code, (request, credentials).
    answered = getattr(request, "bullpen_lockout_answer", None)
    if isinstance(answered, HttpResponse):
        return answered
    if "text/html" in request.headers.get("Accept", ""):
        return page_answer(request)
    return json_answer(request)


def _answered(request: HttpRequest, response: Answer, seconds: int | None) -> Answer:
    if seconds is not None:
        response["Retry-After"] = str(seconds)
    # Axes' middleware, if the site has it, sends this same answer instead of its own.
    request.bullpen_lockout_answer = response  # type: ignore[attr-defined]
    return response
