"""System checks of the live websocket's plumbing: that ASGI_APPLICATION routes Bullpen's socket,
at WEBSOCKET_PATH, behind Channels' AuthMiddleware and an origin check, and that a channel layer
carries its updates."""

from __future__ import annotations

import importlib.util
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from dashboard.checks.mounting import OPEN_READS, TAG, usable_config


@register(TAG)
def check_websocket_route(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    dotted = getattr(settings, "ASGI_APPLICATION", None)
    if not dotted:
        return [
            Error(
                "ASGI_APPLICATION is not set: Bullpen's live updates need an ASGI application "
                "that routes websockets.",
                hint=_ROUTE_HINT,
                id="bullpen.E004",
            )
        ]
    if importlib.util.find_spec("channels") is None:
        return []  # bullpen.E001 says it
    try:
        application = import_string(dotted)
    except Exception as error:  # whatever the site's asgi.py raises, the check reports it
        return [
            Error(
                f"ASGI_APPLICATION {dotted!r} cannot be imported: {error}",
                hint="Fix the import; ASGI_APPLICATION is '<module>.<variable>'.",
                id="bullpen.E005",
            )
        ]
    # Imported when checked, not with the checks: dashboard.routing builds its route from the
    # settings as it is imported, and the checks must load (and say what is wrong) whatever
    # they hold.
    from dashboard.routing import find_live_routes

    search = find_live_routes(application)
    if not search.routes:
        if search.opaque:
            return [
                Warning(
                    f"No websocket route to Bullpen found in {dotted!r}; the search could not "
                    f"look inside {', '.join(sorted(set(search.opaque)))}.",
                    hint=_ROUTE_HINT + " Silence bullpen.W004 if the route is there.",
                    id="bullpen.W004",
                )
            ]
        return [
            Error(
                f"{dotted!r} has no websocket route to Bullpen: pages cannot go live.",
                hint=_ROUTE_HINT,
                id="bullpen.E006",
            )
        ]
    return _route_problems(search.routes)


_ROUTE_HINT = (
    "In asgi.py: application = ProtocolTypeRouter({'http': get_asgi_application(), "
    "'websocket': AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter("
    "[dashboard.routing.websocket_route()])))}), and "
    "ASGI_APPLICATION = '<project>.asgi.application'."
)


def _route_problems(routes: list[Any]) -> list[CheckMessage]:
    from channels.auth import AuthMiddleware
    from channels.security.websocket import OriginValidator

    found: list[CheckMessage] = []
    config = usable_config()
    wanted = str(config["WEBSOCKET_PATH"]) if config else None
    paths = [route.path for route in routes]
    if wanted and None not in paths and wanted not in paths:
        found.append(
            Warning(
                f"Bullpen's pages connect to {wanted!r} (WEBSOCKET_PATH), but the websocket "
                f"route is at {', '.join(repr(p) for p in paths)}.",
                hint="Route it with dashboard.routing.websocket_route(), which follows "
                "WEBSOCKET_PATH, or set WEBSOCKET_PATH to the route's path.",
                id="bullpen.W005",
            )
        )

    def wrapped(kind: type) -> bool:
        return any(isinstance(w, kind) for route in routes for w in route.wrappers)

    if config and config["READ_ACCESS"] != OPEN_READS and not wrapped(AuthMiddleware):
        found.append(
            Warning(
                "Bullpen's websocket route is not behind Channels' AuthMiddleware: signed-in "
                "users are anonymous there and their pages are refused live updates.",
                hint="Wrap the websocket router in channels.auth.AuthMiddlewareStack.",
                id="bullpen.W006",
            )
        )
    if not wrapped(OriginValidator):
        found.append(
            Warning(
                "Bullpen's websocket route does not check the Origin header: any web page a "
                "signed-in user visits could open it with their cookies and read job data.",
                hint="Route it with dashboard.routing.websocket_route(), which checks the "
                "origin's scheme, host and port.",
                id="bullpen.W007",
            )
        )
    return found


@register(TAG)
def check_channel_layer(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    layers = getattr(settings, "CHANNEL_LAYERS", None) or {}
    if "default" in layers:
        return []
    return [
        Warning(
            "CHANNEL_LAYERS has no 'default' layer: Bullpen's live updates go through it.",
            hint="One server process: CHANNEL_LAYERS = {'default': {'BACKEND': "
            "'channels.layers.InMemoryChannelLayer'}}. Several: channels_redis's "
            "RedisPubSubChannelLayer (see docs/deployment.md).",
            id="bullpen.W008",
        )
    ]
