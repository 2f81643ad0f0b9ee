"""The one owner of Bullpen's background services in a web server process: they start with the
server, per event loop, and stop with it.

The services, in the order they start (they stop in the reverse order):

- ``bulk-actions``: the bulk-action runners, one per connection (dashboard/bulk/launch.py);
  bulk actions that a stopped process left resume at once.
- ``live-reader``: the live reader's supervisor, one follower per connection
  (dashboard/live/channel_groups.py). It runs whether or not a page is open; only the process
  holding a connection's live lease reads that Redis, the others wait to take over.
- ``alert-sender``: the alert sender (dashboard/alerts/sender.py), when alerts are delivered;
  it evaluates only while this loop's reader holds the default connection's lease.

``with_background_services(application)`` wraps a site's ASGI application. Under a server that
speaks the ASGI lifespan protocol (uvicorn, hypercorn) the services start at its startup and
stop at its shutdown. Daphne sends no lifespan events; it runs Twisted's asyncio reactor, which
it installs before it loads the application, so the services are started once that reactor
runs, and stopped before it shuts down. Management commands (``migrate``, ``check``) import the
application without running any server: nothing starts there.

Where the server's start cannot be hooked (a site mounted without the wrapper), the services
start with their first use instead: the first live page, the first request Django serves when
alerts are delivered, and the bulk-action runners with the first action or question about one.

Adding a service: give it a :class:`~dashboard.services.registry.Slot` in its own module, a
start function that starts it in the running loop unless it runs (``registry.ensure``), and a
stop function (``registry.stop``); then add a :class:`Service` to :data:`SERVICES` below. A
service's module never imports this one: this one imports the services.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync

from dashboard.alerts import sender
from dashboard.bulk import launch
from dashboard.live import channel_groups, ready_lists
from dashboard.services import registry
from queues.actions import handles
from queues.redis import clients

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Service:
    name: str
    # Starts it in the running loop unless it runs there already (given that loop).
    start: Callable[[asyncio.AbstractEventLoop], object]
    stop: Callable[[], Awaitable[None]]


SERVICES: tuple[Service, ...] = (
    Service("bulk-actions", lambda loop: launch.ensure_runner(), launch.stop),
    Service(
        "live-reader",
        lambda loop: channel_groups.start(beside=(ready_lists.keep_ready,)),
        channel_groups.stop,
    ),
    Service(
        "alert-sender",
        lambda loop: sender.ensure_running(functools.partial(channel_groups.holds_lease, loop)),
        sender.stop,
    ),
)


def start_services() -> None:
    """Start every service in the running loop (those running are kept). Each waits out a
    Redis that is down by itself."""
    loop = asyncio.get_running_loop()
    for service in SERVICES:
        service.start(loop)


async def stop_services() -> None:
    """Stop every service of the running loop, the last started first, and forget what the
    loop kept for its pages (the live hub, shared reads)."""
    for service in reversed(SERVICES):
        await service.stop()
    await registry.stop()


async def server_stopping() -> None:
    """The server stops: its services, then the loop's Redis clients they shared."""
    await stop_services()
    await clients.close_current()
    await handles.close_current()


class BackgroundServices:
    """The site's application, with Bullpen's background services started with the server."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app  # named ``app``: the websocket-route check looks through it
        _follow_daphne()

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
                await server_stopping()
                await send({"type": "lifespan.shutdown.complete"})
                return


def with_background_services(app: ASGIApp) -> BackgroundServices:
    return BackgroundServices(app)


def start_with_requests(*, scope: Any = None, **kwargs: Any) -> None:
    """A ``request_started`` receiver, the fallback where the server's start is not hooked (a
    plain function, like Django's own there, so that WSGI requests pay nothing): when alerts
    are delivered, an ASGI request starts the services in the server's event loop, so that
    people are told with no page open."""
    if scope is None or registry.running_anywhere(sender.ALERT_SENDER):
        return
    if sender.wanted():
        async_to_sync(_start_in_loop)()  # from Django's request thread, into the server's loop


async def _start_in_loop() -> None:
    start_services()


_hooked: list[Any] = []  # the Twisted reactor whose start and shutdown start and stop them


def _follow_daphne() -> None:
    # Looked up, never imported: importing Twisted's reactor would install one.
    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is None or not hasattr(reactor, "callWhenRunning") or reactor in _hooked:
        return
    _hooked.append(reactor)
    # "When running" fires as the reactor starts, just before it runs asyncio's loop: the
    # services are started by the loop's first turn.
    reactor.callWhenRunning(reactor.callLater, 0, _start_in_running_loop)
    reactor.addSystemEventTrigger("before", "shutdown", _stop_before_shutdown)


def _start_in_running_loop() -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # a Twisted reactor that is not asyncio's: first use starts them
        return
    # A context of its own: the services outlive whatever scheduled them.
    loop.call_soon(start_services, context=contextvars.Context())


def _stop_before_shutdown() -> Any:
    """Twisted waits for the Deferred returned here before it stops asyncio's loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    # Imported here: only a process that runs Twisted's asyncio reactor gets here.
    from twisted.internet.defer import Deferred

    stopping = Deferred.fromFuture(loop.create_task(server_stopping()))
    stopping.addErrback(lambda failure: None)  # a failed stop must not hold the shutdown
    return stopping
