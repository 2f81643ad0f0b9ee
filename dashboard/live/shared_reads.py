"""Fresh reads for pages that start watching, one read for the pages that start together.

A page that subscribes gets its list read after it subscribed, so that nothing between its load
and its subscription is missed. Hundreds of pages opening at once (a team following a link, a
server restart reconnecting every tab) would each cost a read and a render; instead a read starts
a moment after the first page asks, and every page that asked before it started shares it: each
still gets a read that began after it subscribed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from dashboard.services import registry
from dashboard.services.registry import Slot

T = TypeVar("T")

WINDOW = 0.05  # seconds a read waits for other pages to ask for the same thing


class SharedReads(Generic[T]):
    def __init__(self, window: float = WINDOW) -> None:
        self.window = window
        self._flights: dict[Hashable, tuple[float, asyncio.Future[T]]] = {}

    async def get(self, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
        asked = time.monotonic()
        flight = self._flights.get(key)
        if flight is None or flight[0] < asked:  # that read began before this page asked
            start = asked + self.window
            flight = (start, asyncio.ensure_future(self._run(key, start, read)))
            self._flights[key] = flight
        return await asyncio.shield(flight[1])

    async def _run(self, key: Hashable, start: float, read: Callable[[], Awaitable[T]]) -> T:
        await asyncio.sleep(max(0.0, start - time.monotonic()))
        try:
            return await read()
        finally:
            if key in self._flights and self._flights[key][0] == start:
                del self._flights[key]


LIST_READS: Slot[SharedReads[str]] = Slot("shared-list-reads")


def list_reads() -> SharedReads[str]:
    """This event loop's shared reads of rendered job lists."""
    return registry.kept(LIST_READS, SharedReads[str])
