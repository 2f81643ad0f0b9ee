"""Sending live messages beneath Channels' session middleware."""

from __future__ import annotations

from typing import Any

from channels.sessions import InstanceSessionWrapper


def beneath_sessions(send: Any) -> Any:
    """The ASGI send beneath Channels' session middleware, for live messages.

    The session wrapper reads the lazy session's state on every message it passes on, though
    it acts only on HTTP responses; with hundreds of pages, a few messages a second each, that
    was a tenth of the server's fan-out time. The session was resolved when the socket
    connected and a live message never changes it.
    """
    while isinstance(getattr(send, "__self__", None), InstanceSessionWrapper):
        send = send.__self__.real_send
    return send
