"""An ASGI fast path for the read-only JSON API.

Django's ASGI request cycle costs ~2 ms before a view runs (request signals hop to a fresh
thread per request; each classic middleware hops again). The overview's own work is ~0.5 ms, so
the hot GET routes of the API are answered here, before Django, with the very same functions
(``dashboard.api.reads``) and errors. Only when the read check is open: a site whose reads need its
own login (sessions, users) goes through Django as usual. Everything else passes through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.urls import NoReverseMatch, reverse

from dashboard.api import reads as api
from dashboard.auth.access import reads_are_open
from dashboard.auth.guards import status_of
from dashboard.pages.converters import NameConverter
from queues.errors import BullpenError
from queues.reads.jsontext import dumps
from queues.redis.errors import translate_redis_errors

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[..., Awaitable[None]]

_name = NameConverter()


class FastReadAPI:
    """Wraps the site's HTTP application; answers ``GET <mount>/api/queues/...`` itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._prefix: str | None = None

    def prefix(self) -> str | None:
        if self._prefix is None:
            try:
                self._prefix = reverse("bullpen:api-queues")
            except NoReverseMatch:
                self._prefix = ""
        return self._prefix or None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self._route(scope)
        if route is None:
            await self.app(scope, receive, send)
            return
        handler, args = route
        try:
            async with translate_redis_errors():  # as the views' guard does
                body: Any = await handler(*args)
            status = 200
        except BullpenError as error:
            body, status = {"error": str(error)}, status_of(error)
        await _send_json(send, status, body)

    def _route(self, scope: Scope) -> tuple[Callable[..., Awaitable[Any]], tuple[Any, ...]] | None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope.get("root_path"):
            return None
        prefix = self.prefix()
        path: str = scope["path"]
        if prefix is None or not path.startswith(prefix) or not reads_are_open():
            return None
        if not _host_allowed(scope):
            return None  # Django answers with its own 400
        parts = path[len(prefix) :].split("/")
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if parts == [""]:
            return api.queues_body, (query,)
        if len(parts) == 3 and parts[1] == "jobs" and parts[0] and parts[2] == "":
            return api.jobs_body, (_name.to_python(parts[0]), query)
        if len(parts) == 4 and parts[1] == "jobs" and parts[0] and parts[2] and parts[3] == "":
            return api.job_body, (_name.to_python(parts[0]), _name.to_python(parts[2]))
        return None


def _host_allowed(scope: Scope) -> bool:
    host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), "")
    domain, _port = split_domain_port(host)
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


async def _send_json(send: Send, status: int, body: Any) -> None:
    payload = dumps(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"x-content-type-options", b"nosniff"),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
