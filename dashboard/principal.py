"""Who is asking: basic credentials, a logged-in Django user, or nobody."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs

from django.http import HttpRequest

from dashboard import basic_auth

Via = Literal["basic", "session", "anonymous"]


@dataclass(frozen=True)
class Principal:
    username: str
    via: Via
    user: Any = None  # the Django user, when logged in through the site
    bad_credentials: bool = False  # basic credentials were sent and were wrong

    @property
    def authenticated(self) -> bool:
        return self.via != "anonymous"


ANONYMOUS = Principal("", "anonymous")


async def _from(authorization: str | None, user: Any) -> Principal:
    credentials = basic_auth.parse(authorization)
    if credentials is not None:
        if await basic_auth.verify(*credentials):
            return Principal(credentials[0], "basic")
        return Principal(credentials[0], "anonymous", bad_credentials=True)
    if user is not None and getattr(user, "is_authenticated", False):
        return Principal(user.get_username(), "session", user)
    return ANONYMOUS


async def from_request(request: HttpRequest) -> Principal:
    user = await request.auser() if hasattr(request, "auser") else None
    return await _from(request.headers.get("Authorization"), user)


async def from_scope(scope: dict[str, Any]) -> Principal:
    headers = dict(scope.get("headers") or [])
    authorization = headers.get(b"authorization", b"").decode("latin-1") or None
    # Channels' AuthMiddlewareStack has resolved the session's user before the consumer runs.
    principal = await _from(authorization, scope.get("user"))
    if principal.via == "anonymous" and not principal.bad_credentials:
        # A handshake without credentials: the page's ticket, if it has one.
        from dashboard import ws_ticket

        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        ticketed = ws_ticket.redeem((query.get("ticket") or [""])[0])
        if ticketed is not None:
            return ticketed
    return principal
