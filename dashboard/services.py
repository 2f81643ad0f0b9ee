"""Bullpen's background services started with the web server process, not with its first
request: bulk actions that a stopped process left resume at once, and alerts are evaluated
with no page open.

``with_background_services(application)`` wraps a site's ASGI application. Under a server that
speaks the ASGI lifespan protocol (uvicorn, hypercorn) the services start at its startup and
stop at its shutdown. Daphne sends no lifespan events; it runs Twisted's asyncio reactor, which
it installs before it loads the application, so the services are started once that reactor
runs. Management commands (``migrate``, ``check``) import the application without running any
server: nothing starts there.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BackgroundServices:
    """The site's application, with Bullpen's background services started with the server."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app  # named ``app``: the websocket-route check looks through it
        _start_when_daphne_runs()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                start_services()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await stop_services()
                await send({"type": "lifespan.shutdown.complete"})
                return


def with_background_services(app: ASGIApp) -> BackgroundServices:
    return BackgroundServices(app)


def start_services() -> None:
    """Start this loop's bulk-action runners, and the live follower and alert sender when
    alerts are to be delivered. Each waits out a Redis that is down by itself."""
    from dashboard.bulk import launch
    from dashboard.live import channel_groups
    from queues.alerts.watch import DeliverySettings

    launch.ensure_runner()
    if DeliverySettings.from_config().anyone:
        channel_groups.ensure_started()


async def stop_services() -> None:
    from dashboard.alerts import sender
    from dashboard.bulk import launch
    from dashboard.live import channel_groups

    await launch.stop()
    await sender.stop()
    await channel_groups.stop()


def _start_when_daphne_runs() -> None:
    # Looked up, never imported: importing Twisted's reactor would install one.
    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is not None and hasattr(reactor, "callWhenRunning"):
        # "When running" fires as the reactor starts, just before it runs asyncio's loop: the
        # services are started by the loop's first turn.
        reactor.callWhenRunning(reactor.callLater, 0, _start_in_running_loop)


def _start_in_running_loop() -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # a Twisted reactor that is not asyncio's: requests start them
        return
    # A context of its own: the services outlive whatever scheduled them.
    loop.call_soon(start_services, context=contextvars.Context())
