"""Confirmations ("Job 42 removed") written after an action and shown once by the next page.

With Django's messages framework installed (app and middleware), they are messages, stored as
the site configures (signed cookie or session). Without it, Bullpen keeps one in a cookie of
its own, signed with ``django.core.signing`` and valid for two minutes. Either way only the
server writes them: no query string or unsigned cookie can make a page say anything, and the
page escapes the text like any other value.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.contrib import messages
from django.core import signing
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.urls import reverse

COOKIE = "bullpen_notice"
_SALT = "bullpen.notice"
# Long enough for the page load that follows the action; short enough that an old cookie
# (copied, or left by a page that never loaded) soon says nothing.
MAX_AGE = 120
MAX_LENGTH = 300
_SHOWN = "_bullpen_notices_shown"


@dataclass(frozen=True)
class Notice:
    text: str
    error: bool = False


def uses_messages(request: HttpRequest) -> bool:
    """The site has Django's messages framework: app installed and middleware active."""
    return apps.is_installed("django.contrib.messages") and hasattr(request, "_messages")


def _cookie_path() -> str:
    # Only Bullpen's pages read it: the host site's requests never carry it.
    return reverse("bullpen:overview")


def add(request: HttpRequest, response: HttpResponseBase, text: str) -> None:
    """Keep ``text`` for the next page this browser loads."""
    if len(text) > MAX_LENGTH:
        text = text[: MAX_LENGTH - 1] + "…"
    if uses_messages(request):
        messages.success(request, text)
        return
    response.set_cookie(
        COOKIE,
        signing.dumps(text, salt=_SALT, compress=True),
        max_age=MAX_AGE,
        path=_cookie_path(),
        secure=request.is_secure(),
        httponly=True,
        samesite="Lax",
    )


def pending(request: HttpRequest) -> list[Notice]:
    """The confirmations waiting for this page; reading them uses them up."""
    setattr(request, _SHOWN, True)
    found: list[Notice] = []
    if uses_messages(request):
        found += [
            Notice(str(message), message.level >= messages.ERROR)
            for message in messages.get_messages(request)
        ]
    raw = request.COOKIES.get(COOKIE)
    if raw:
        try:
            text = signing.loads(raw, salt=_SALT, max_age=MAX_AGE)
        except signing.BadSignature:  # forged, altered or expired: say nothing
            text = None
        if isinstance(text, str):
            found.append(Notice(text))
    return found


def finish(request: HttpRequest, response: HttpResponseBase) -> None:
    """Once a page has shown the cookie's confirmation, forget it (messages forget their own)."""
    if getattr(request, _SHOWN, False) and COOKIE in request.COOKIES:
        response.delete_cookie(COOKIE, path=_cookie_path(), samesite="Lax")
