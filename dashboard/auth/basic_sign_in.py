"""One request's basic credentials: right, wrong, or refused unchecked because its client is
locked out after too many failures.

With :mod:`dashboard.auth.backend` in ``AUTHENTICATION_BACKENDS`` the check goes through
Django's ``authenticate()``, where django-axes refuses a locked-out client before any password
is hashed and counts each failure. Without it (a site that has not set it up, which
``bullpen.W017`` points out) the password is checked directly and nothing is throttled.
Failures are logged and written to the audit log either way.

The verdict on a pair of credentials is remembered briefly (right ones for 5 minutes, wrong
ones for 1), keyed by an HMAC of the credentials under a key made at start: a script acting on
many jobs pays for one password hash, and so does a browser resending a mistyped password.
Axes is asked before any remembered verdict: a locked-out client is refused (429) whatever it
sends, and nothing it sends is remembered.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from typing import Any, Literal

from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import authenticate
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest

from dashboard.audit import writer
from dashboard.auth import axes_gate, basic_auth
from dashboard.auth import backend as auth_backend

Verdict = Literal["right", "wrong", "locked"]

log = logging.getLogger("bullpen.auth")

_REMEMBER_SECONDS: dict[Verdict, float] = {"right": 300.0, "wrong": 60.0}
_MAX_REMEMBERED = 1000
_KEY = secrets.token_bytes(32)
# When each remembered verdict expires, by key; wrong ones apart, so that a flood of them
# never pushes out the right ones.
_remembered: dict[Verdict, dict[str, float]] = {"right": {}, "wrong": {}}


async def verify(request: HttpRequest, username: str, password: str) -> Verdict:
    """The verdict on the credentials an HTTP request carries (in Django's request thread)."""
    return await _verify(request, username, password, websocket=False)


async def verify_for_websocket(scope: dict[str, Any], username: str, password: str) -> Verdict:
    """The same for a websocket handshake: throttled and audited by its client's address."""
    return await _verify(request_for(scope), username, password, websocket=True)


async def _verify(
    request: HttpRequest, username: str, password: str, *, websocket: bool
) -> Verdict:
    if username == basic_auth.SIGNED_OUT:
        return "wrong"  # sent on purpose by Sign out: neither a guess nor worth a hash
    # Outside a request, Channels' wrapper closes this thread's database connection after
    # use, as Django does when a request ends.
    check = database_sync_to_async(_check) if websocket else sync_to_async(_check)
    verdict: Verdict = await check(request, username, password)
    return verdict


def _check(request: HttpRequest, username: str, password: str) -> Verdict:
    # Axes first: a locked-out client is refused whatever it sends, before any remembered
    # verdict is looked up. Were one looked up first, the right password (anyone's right
    # answer of the last minutes) would pass where a guess is refused: a password oracle.
    if axes_gate.locked_out(request, username):
        _attempt(request, username, password)  # axes counts it and restarts the cool-off
        return "locked"
    key = hmac.new(_KEY, f"{username}\x00{password}".encode(), hashlib.sha256).hexdigest()
    now = time.monotonic()
    for known, expiries in _remembered.items():
        if expiries.get(key, 0.0) > now:
            return known
    verdict = _attempt(request, username, password)
    kept = _remembered.get(verdict)
    if kept is not None:  # never a lockout: that is axes' to say, each time
        if len(kept) >= _MAX_REMEMBERED:
            kept.clear()
        kept[key] = now + _REMEMBER_SECONDS[verdict]
    return verdict


def throttled() -> bool:
    """Whether credentials go through ``authenticate()`` (and so through django-axes)."""
    return auth_backend.PATH in settings.AUTHENTICATION_BACKENDS


def _attempt(request: HttpRequest, username: str, password: str) -> Verdict:
    if not throttled():
        return "right" if basic_auth.check(username, password) else _failed(request, username)
    user = authenticate(request, username=username, password=password, bullpen_basic=True)
    if isinstance(user, auth_backend.BasicUser):
        return "right"
    if user is not None:
        # A backend listed before Bullpen's took dashboard credentials (bullpen.W018).
        backend = getattr(user, "backend", type(user).__name__)
        log.error("Basic credentials of %r answered by %s", username, backend)
        return "wrong"
    locked = bool(getattr(request, "axes_locked_out", False))
    if not getattr(request, "bullpen_password_checked", False):
        # Refused before any check: the client was locked out already. Axes counts the
        # attempt; the audit log has the failures, and the one that locked the client out.
        address = request.META.get("REMOTE_ADDR", "")
        log.info("Basic sign-in refused while locked out: user %r from %s", username, address)
        return "locked" if locked else "wrong"
    return _failed(request, username, locked=locked)


def _failed(request: HttpRequest, username: str, *, locked: bool = False) -> Verdict:
    log.warning(
        "Basic sign-in failed: user %r from %s%s",
        username,
        request.META.get("REMOTE_ADDR", ""),
        " (now locked out)" if locked else "",
    )
    writer.record_sign_in_failure(request, username, status=429 if locked else 401)
    return "locked" if locked else "wrong"


def request_for(scope: dict[str, Any]) -> HttpRequest:
    """A stand-in request for a websocket handshake: what axes and the audit log read."""
    request = HttpRequest()
    request.method = "GET"
    request.path = request.path_info = str(scope.get("path", ""))
    headers = dict(scope.get("headers") or [])
    client = scope.get("client") or ("", 0)
    request.META = {
        "REMOTE_ADDR": str(client[0]),
        "PATH_INFO": request.path,
        "HTTP_USER_AGENT": headers.get(b"user-agent", b"").decode("latin-1"),
    }
    forwarded = headers.get(b"x-forwarded-for")
    if forwarded:
        request.META["HTTP_X_FORWARDED_FOR"] = forwarded.decode("latin-1")
    return request


def forget() -> None:
    for expiries in _remembered.values():
        expiries.clear()


_VERDICT_SETTINGS = ("BULLPEN", "AUTHENTICATION_BACKENDS", "PASSWORD_HASHERS")


@receiver(setting_changed)
def _forget_on_change(*, setting: str, **kwargs: Any) -> None:
    # A verdict holds for the users, hashers and throttling it was made with.
    if setting in _VERDICT_SETTINGS or setting.startswith("AXES_"):
        forget()
