"""The live websocket's origin check: the page opening it must be this site's own, by scheme,
host and port.

A browser sends the site's cookie (or its cached basic credentials) with a websocket handshake
whatever page opens it, so a page of another origin could read job data in a signed-in user's
name. Channels' ``AllowedHostsOriginValidator`` compares host names only: ``http://localhost:9999``
passes for a site on ``:8000``, and any other service on the same host could open the socket.
Here the origin must be the site's own origin (the scheme the socket came in by, the ``Host``
header, which must be one of ``ALLOWED_HOSTS``), or one of ``CSRF_TRUSTED_ORIGINS``, which
Django's CSRF check trusts too. Browsers always send ``Origin`` with a websocket handshake; one
without it comes from a program, not a page, and goes on to the credential check.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import OriginValidator, WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

Origin = tuple[str, str, int]  # scheme, host, port
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SECURE_SCHEMES = ("wss", "https")


def parse_origin(text: str) -> Origin | None:
    """``http://host:port`` as (scheme, host, port), the port defaulting to the scheme's; None
    for anything else (``null``, a path, another scheme)."""
    try:
        parts = urlsplit(text.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _scheme(scope: dict[str, Any]) -> str:
    """The scheme the browser used: the socket's own, or what a TLS-terminating proxy says in
    the header named by ``SECURE_PROXY_SSL_HEADER`` (as Django decides ``request.is_secure``)."""
    if scope.get("scheme") in _SECURE_SCHEMES:
        return "https"
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        meta_name, secure_value = proxy
        header = meta_name.removeprefix("HTTP_").lower().replace("_", "-").encode("latin-1")
        given = _header(scope, header)
        if given is not None and given.split(",")[0].strip() == secure_value:
            return "https"
    return "http"


def _allowed_hosts() -> list[str]:
    hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not hosts:
        return [".localhost", "127.0.0.1", "[::1]"]  # as Django's own default under DEBUG
    return hosts


def own_origin(scope: dict[str, Any]) -> Origin | None:
    """This site's origin as the handshake names it, when its ``Host`` is an allowed host."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, port = split_domain_port(host.lower())
    if not domain or not validate_host(domain, _allowed_hosts()):
        return None
    scheme = _scheme(scope)
    try:
        number = int(port) if port else _DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return scheme, domain.strip("[]"), number


def _trusted(origin: Origin, text: str) -> bool:
    """Whether ``origin`` is among ``CSRF_TRUSTED_ORIGINS`` (``https://*.example.com``
    admits subdomains, as in Django's CSRF check)."""
    for entry in getattr(settings, "CSRF_TRUSTED_ORIGINS", ()):
        if "*" not in entry:
            if parse_origin(entry) == origin:
                return True
            continue
        scheme, _, netloc = entry.lower().partition("://")
        given = urlsplit(text.strip().lower()).netloc
        if scheme == origin[0] and is_same_domain(given, netloc.removeprefix("*")):
            return True
    return False


def origin_allowed(scope: dict[str, Any]) -> bool:
    text = _header(scope, b"origin")
    if text is None:
        return True  # not a browser page: the credential check decides
    origin = parse_origin(text)
    if origin is None:
        return False
    return origin == own_origin(scope) or _trusted(origin, text)


class SameOriginValidator(OriginValidator):  # type: ignore[misc]
    """Refuses a websocket handshake from another origin (403), before the consumer runs.
    An ``OriginValidator``, so the system checks see the route's origin check."""

    def __init__(self, application: Any) -> None:
        super().__init__(application, allowed_origins=[])

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope.get("type") == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
