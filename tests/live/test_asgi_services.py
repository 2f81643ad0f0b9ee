"""The background services start with an ASGI server's lifespan startup, before any request,
and stop at its shutdown (daphne's path: tests/actions/test_action_faults.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from dashboard.bulk import launch
from dashboard.services import with_background_services


async def test_lifespan_startup_starts_the_runners_and_shutdown_stops_them() -> None:
    requests: list[Any] = []

    async def site(scope: Any, receive: Any, send: Any) -> None:
        requests.append(scope)

    app = with_background_services(site)
    inbox: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    serving = asyncio.create_task(app({"type": "lifespan"}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    assert await outbox.get() == {"type": "lifespan.startup.complete"}
    runners = launch.running_here()
    assert runners and all(not task.done() for task in runners)
    await inbox.put({"type": "lifespan.shutdown"})
    await serving
    assert await outbox.get() == {"type": "lifespan.shutdown.complete"}
    assert launch.running_here() == [] and all(task.done() for task in runners)
    assert requests == []  # the site itself saw no lifespan message
