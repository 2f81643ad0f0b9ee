"""This process's alert sender (queues/alerts/watch.py), started where the live follower runs
(dashboard/live/channel_groups.py) and evaluating only while that follower holds the lease.

A process starts its follower with its first websocket; a site that configures alert delivery
also starts both with its first HTTP request Django serves (a health check will do), so that
people are told with no dashboard open.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync

from dashboard.alerts.delivery import deliver
from queues.alerts.watch import AlertWatch, DeliverySettings
from queues.cancelling import cancel_and_wait

_running: dict[asyncio.AbstractEventLoop, tuple[AlertWatch, asyncio.Task[None]]] = {}


def ensure_running(holds_lease: Callable[[], bool]) -> AlertWatch | None:
    """Start this loop's sender when someone is to be told (none otherwise)."""
    loop = asyncio.get_running_loop()
    running = _running.get(loop)
    if running is not None and not running[1].done():
        return running[0]
    if not DeliverySettings.from_config().anyone:
        return None
    watch = AlertWatch(deliver, holds_lease)
    # A context of its own: the request or websocket starting it ends long before it does.
    task = loop.create_task(watch.run(), name="bullpen-alerts", context=contextvars.Context())
    _running[loop] = (watch, task)
    return watch


async def stop() -> None:
    """Stop this loop's sender (tests, shutdown)."""
    running = _running.pop(asyncio.get_running_loop(), None)
    if running is not None:
        await cancel_and_wait(running[1])


def start_with_requests(*, scope: Any = None, **kwargs: Any) -> None:
    """A ``request_started`` receiver (a plain function, like Django's own there, so that WSGI
    requests pay nothing): an ASGI request starts the follower and this sender in the
    server's event loop, once, when alert delivery is configured."""
    if scope is None or any(not task.done() for _, task in list(_running.values())):
        return
    if DeliverySettings.from_config().anyone:
        async_to_sync(_start_in_loop)()  # from Django's request thread, into the server's loop


async def _start_in_loop() -> None:
    from dashboard.live import channel_groups  # live imports this module

    channel_groups.ensure_started()
