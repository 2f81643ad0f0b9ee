"""Websocket routes. A host's ``asgi.py`` adds ``dashboard.routing.websocket_urlpatterns``."""

from __future__ import annotations

from django.urls import path

from dashboard.consumers import LiveConsumer

websocket_urlpatterns = [
    path("ws/bullpen/", LiveConsumer.as_asgi(), name="bullpen-live"),
]
