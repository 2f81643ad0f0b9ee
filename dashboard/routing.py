"""Websocket routes. A host's ``asgi.py`` adds ``websocket_route()`` to its ``URLRouter`` (or
the whole ``websocket_urlpatterns``); the system checks find the route again with
:func:`find_live_routes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from channels.routing import ProtocolTypeRouter, URLRouter
from django.core.handlers.asgi import ASGIHandler
from django.urls import URLPattern, path
from django.urls.resolvers import RoutePattern

from dashboard.live.consumers import LiveConsumer
from dashboard.live.ws_origin import SameOriginValidator
from queues.config.settings import get_config


def websocket_route() -> URLPattern:
    """The live websocket at ``BULLPEN["WEBSOCKET_PATH"]``, the path the pages connect to,
    behind its own origin check (scheme, host and port: ws_origin.py), whatever the host site
    wraps its router in."""
    route = str(get_config()["WEBSOCKET_PATH"]).lstrip("/")
    consumer = SameOriginValidator(LiveConsumer.as_asgi())
    pattern: URLPattern = path(route, consumer, name="bullpen-live")
    return pattern


websocket_urlpatterns = [websocket_route()]


@dataclass(frozen=True)
class LiveRoute:
    """Where an ASGI application sends Bullpen's websocket, and what wraps it on the way."""

    path: str | None  # "/ws/bullpen/", or None when a pattern on the way is a regex or converter
    wrappers: tuple[Any, ...]  # the middleware objects between the application and the route


@dataclass
class RouteSearch:
    routes: list[LiveRoute] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)  # applications the search cannot look into


# Attributes under which ASGI wrappers keep the application they wrap: Channels' middleware
# (``inner``), its origin validator and Django's static handler (``application``), most others
# (``app``).
_INNER = ("inner", "application", "app")
_MAX_DEPTH = 40


def find_live_routes(application: Any) -> RouteSearch:
    """Walk routers and middleware from ``application`` to every route to ``LiveConsumer``."""
    search = RouteSearch()
    _walk(application, "/", (), search, 0)
    return search


def _walk(
    app: Any, prefix: str | None, wrappers: tuple[Any, ...], found: RouteSearch, depth: int
) -> None:
    if depth > _MAX_DEPTH:
        found.opaque.append(_name(app))
        return
    if isinstance(app, ProtocolTypeRouter):
        # Only the websocket protocol can reach a consumer of websockets.
        if "websocket" in app.application_mapping:
            _walk(app.application_mapping["websocket"], prefix, wrappers, found, depth + 1)
        return
    if isinstance(app, URLRouter):
        for route in app.routes:
            _walk(route.callback, _join(prefix, route.pattern), wrappers, found, depth + 1)
        return
    consumer = getattr(app, "consumer_class", None)
    if isinstance(consumer, type):
        if issubclass(consumer, LiveConsumer):
            found.routes.append(LiveRoute(prefix, wrappers))
        return
    if isinstance(app, ASGIHandler):
        return  # Django's HTTP handler: no websockets behind it
    for attribute in _INNER:
        inner = getattr(app, attribute, None)
        if inner is not None and callable(inner):
            _walk(inner, prefix, (*wrappers, app), found, depth + 1)
            return
    found.opaque.append(_name(app))


def _join(prefix: str | None, pattern: Any) -> str | None:
    if prefix is None or not isinstance(pattern, RoutePattern) or pattern.converters:
        return None
    return prefix + str(pattern)


def _name(app: Any) -> str:
    # A function (or class) names itself; any other object is named by its class.
    named = app if hasattr(app, "__qualname__") else type(app)
    return f"{named.__module__}.{named.__qualname__}"
