"""The background services start with an ASGI server's lifespan startup, before any request,
and stop at its shutdown (daphne's path: tests/live/test_server_services.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from django.test import override_settings

from dashboard.bulk import launch
from dashboard.services import registry
from dashboard.services.lifecycle import with_background_services


async def test_lifespan_startup_starts_every_service_and_shutdown_stops_them(
    bullpen_settings: dict[str, Any],
) -> None:
    requests: list[Any] = []

    async def site(scope: Any, receive: Any, send: Any) -> None:
        requests.append(scope)

    app = with_background_services(site)
    inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    alerts = {"WEBHOOKS": ["http://127.0.0.1:9/hook"]}
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": alerts}):
        serving = asyncio.create_task(app({"type": "lifespan"}, inbox.get, outbox.put))
        await inbox.put({"type": "lifespan.startup"})
        assert await outbox.get() == {"type": "lifespan.startup.complete"}
        runners = launch.running_here()
        assert runners and all(not task.done() for task in runners)
        started = registry.tasks()
        names = {task.get_name() for task in started}
        assert {"bullpen-live-reader", "bullpen-alert-sender"} <= names
        assert all(not task.done() for task in started)
        await inbox.put({"type": "lifespan.shutdown"})
        await serving
    assert await outbox.get() == {"type": "lifespan.shutdown.complete"}
    assert launch.running_here() == [] and registry.tasks() == []
    assert all(task.done() for task in started)  # nothing left pending with the loop
    assert requests == []  # the site itself saw no lifespan message
