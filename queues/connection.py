"""The Redis connection of this process: one client (and pool) per running event loop.

redis-py's asyncio connections belong to the loop that opened them. Daphne runs one loop, so
a deployment has one pool; tests and management commands that start their own loops get theirs.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import redis.asyncio as aioredis

from queues.conf import get_config

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis] = (
    weakref.WeakKeyDictionary()
)


def client_options(*, blocking: bool = False) -> dict[str, Any]:
    """Options shared by every client Bullpen opens.

    Responses are decoded (the bullmq package needs it); bytes that are not UTF-8, which a
    hand-written job hash may hold, become U+FFFD instead of failing the whole page.
    """
    timeout = float(get_config()["REDIS_TIMEOUT"])
    return {
        "decode_responses": True,
        "encoding_errors": "replace",
        "socket_connect_timeout": timeout,
        # Blocking reads (XREAD BLOCK, worker waits) must not be cut by the socket timeout.
        "socket_timeout": None if blocking else timeout,
        "health_check_interval": 30,
    }


def new_client(*, blocking: bool = False) -> aioredis.Redis:
    """A client of its own, for a caller that blocks on it or must close it itself."""
    return aioredis.Redis.from_url(get_config()["REDIS_URL"], **client_options(blocking=blocking))


def get_client() -> aioredis.Redis:
    """The shared client for the running event loop."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = new_client()
        _clients[loop] = client
    return client


# Clients replaced by a settings change, closed by close_current() on their own loop.
_retired: list[tuple[asyncio.AbstractEventLoop, aioredis.Redis]] = []


def reset() -> None:
    """Retire every client: the settings they were made from changed."""
    _retired.extend(_clients.items())
    _clients.clear()


async def close_current() -> None:
    """Close the running loop's shared client (tests and commands that end their loop)."""
    loop = asyncio.get_running_loop()
    mine = [client for owner, client in _retired if owner is loop]
    _retired[:] = [(owner, client) for owner, client in _retired if owner is not loop]
    client = _clients.pop(loop, None)
    for each in [*mine, *([client] if client is not None else [])]:
        await each.aclose()
