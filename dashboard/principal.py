"""Who is asking: basic credentials, a logged-in Django user, or nobody.

Basic credentials are checked once per request (:mod:`dashboard.basic_sign_in`: throttled,
failures audited); the answer is kept on the request for every later question.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs

from django.http import HttpRequest

from dashboard import basic_auth, basic_sign_in
from dashboard.basic_sign_in import Verdict

Via = Literal["basic", "session", "anonymous"]


@dataclass(frozen=True)
class Principal:
    username: str
    via: Via
    user: Any = None  # the Django user, when logged in through the site
    bad_credentials: bool = False  # basic credentials were sent and were wrong
    locked_out: bool = False  # ... and too many failures locked them out (answer 429)

    @property
    def authenticated(self) -> bool:
        return self.via != "anonymous"


ANONYMOUS = Principal("", "anonymous")


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
        from dashboard import ws_ticket

        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        ticketed = ws_ticket.redeem((query.get("ticket") or [""])[0])
        if ticketed is not None:
            return ticketed
    return principal
