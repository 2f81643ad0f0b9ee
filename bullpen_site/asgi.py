"""ASGI entry point of the standalone site: HTTP through Django, websockets through Channels,
Bullpen's background services started with the server."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bullpen_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from dashboard.api.fast_path import FastReadAPI  # noqa: E402
from dashboard.routing import websocket_urlpatterns  # noqa: E402
from dashboard.services.lifecycle import with_background_services  # noqa: E402

# Bulk actions, the live reader and alerts start with the server (not with its first request).
application = with_background_services(
    ProtocolTypeRouter(
        {
            "http": FastReadAPI(django_asgi_app),
            "websocket": AllowedHostsOriginValidator(
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
            ),
        }
    )
)
