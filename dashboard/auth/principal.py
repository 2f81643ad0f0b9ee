"""Who is asking: basic credentials, a logged-in Django user, or nobody.

Basic credentials are checked once per request (:mod:`dashboard.auth.basic_sign_in`: throttled,
failures audited); the answer is kept on the request for every later question. The answer's
type, :class:`Principal`, lives in the leaf ``identity.py`` and is re-exported here.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from importlib import import_module
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import (
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
    load_backend,
)
from django.http import HttpRequest
from django.utils.crypto import constant_time_compare

from dashboard.auth import basic_auth, basic_sign_in
from dashboard.auth.basic_sign_in import Verdict
from dashboard.auth.identity import ANONYMOUS as ANONYMOUS
from dashboard.auth.identity import Principal as Principal
from dashboard.auth.identity import Via as Via
from dashboard.live import ws_ticket
from queues.config.settings import get_config


async def _from(
    authorization: str | None, user: Any, verify: Callable[[str, str], Awaitable[Verdict]]
) -> Principal:
    credentials = basic_auth.parse(authorization)
    if credentials is not None:
        verdict = await verify(*credentials)
        if verdict == "right":
            return Principal(credentials[0], "basic")
        return Principal(
            credentials[0], "anonymous", bad_credentials=True, locked_out=verdict == "locked"
        )
    if user is not None and getattr(user, "is_authenticated", False):
        return Principal(user.get_username(), "session", user)
    return ANONYMOUS


async def from_request(request: HttpRequest) -> Principal:
    known: Principal | None = getattr(request, "_bullpen_principal", None)
    if known is not None:
        return known  # a second check would count a failure twice
    user = await request.auser() if hasattr(request, "auser") else None
    verify = functools.partial(basic_sign_in.verify, request)
    principal = await _from(request.headers.get("Authorization"), user, verify)
    request._bullpen_principal = principal  # type: ignore[attr-defined]
    return principal


async def from_scope(scope: dict[str, Any]) -> Principal:
    headers = dict(scope.get("headers") or [])
    authorization = headers.get(b"authorization", b"").decode("latin-1") or None
    # Channels' AuthMiddlewareStack has resolved the session's user before the consumer runs.
    principal = await _from(
        authorization,
        scope.get("user"),
        functools.partial(basic_sign_in.verify_for_websocket, scope),
    )
    if principal.via == "anonymous" and not principal.bad_credentials:
        # A handshake without credentials: the page's ticket, if it has one.
        ticketed = ws_ticket.redeem(_ticket(scope))
        if ticketed is not None:
            return ticketed
    return principal


def _ticket(scope: dict[str, Any]) -> str:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return str((query.get("ticket") or [""])[0])


def basic_user_configured(username: str) -> bool:
    """Whether ``username`` is one of the basic-auth users the settings name now."""
    config = get_config()
    users = {**(config.get("BASIC_AUTH_USERS") or {}), **(config.get("BASIC_AUTH_PLAIN") or {})}
    return username in users


async def refreshed(principal: Principal, scope: dict[str, Any]) -> Principal:
    """``principal`` as it stands now, for a websocket opened a while ago: a basic-auth user
    still configured, a session still signed in to the same active user (read afresh from the
    session store and the database); anyone else is anonymous now."""
    if principal.via == "basic":
        if not basic_user_configured(principal.username):
            return ANONYMOUS
        headers = dict(scope.get("headers") or [])
        if b"authorization" not in headers and _ticket(scope):
            # Let in by its page's ticket: the ticket holds while the user's password is the
            # one it was issued under (its age counts only at the handshake).
            held = ws_ticket.redeem(_ticket(scope), fresh=False)
            return principal if held == principal else ANONYMOUS
        return principal
    if principal.via == "session":
        user = await database_sync_to_async(_session_user)(scope.get("session"))
        if user is None or user.get_username() != principal.username:
            return ANONYMOUS
        return Principal(principal.username, "session", user)
    return principal


def _session_user(session: Any) -> Any:
    """The active user ``session`` is signed in as now, or None: signed out, expired, the user
    deactivated or removed, or its password changed (Django's own session hash check)."""
    key = getattr(session, "session_key", None)
    if not key:
        return None
    stored = import_module(settings.SESSION_ENGINE).SessionStore(key)
    try:
        user_id, backend_path = stored[SESSION_KEY], stored[BACKEND_SESSION_KEY]
    except KeyError:
        return None
    pk = get_user_model()._meta.pk
    if pk is not None:  # the id as the session keeps it is text; the database's may not be
        user_id = pk.to_python(user_id)
    if backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    user = load_backend(backend_path).get_user(user_id)
    if user is None or not getattr(user, "is_active", True):
        return None
    if hasattr(user, "get_session_auth_hash"):
        given = stored.get(HASH_SESSION_KEY)
        if not (given and constant_time_compare(given, user.get_session_auth_hash())):
            return None
    return user
