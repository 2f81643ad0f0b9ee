"""Helpers that several test modules share.

Moved here from ``tests.live.test_live``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from channels.testing import WebsocketCommunicator

from queues.reads.keys import STATES
from tests.support.peer import Peer

Message = dict[str, Any]


async def wait_for(
    socket: WebsocketCommunicator,
    predicate: Callable[[Message], bool],
    timeout: float = 15,  # noqa: ASYNC109 - one deadline across many receives
) -> tuple[Message, list[Message]]:
    """Receive until a message matches; return it and everything received before it."""
    seen: list[Message] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = await receive(socket, max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        if predicate(message):
            return message, seen
        seen.append(message)
    raise AssertionError(f"no matching message in {timeout}s; got {seen!r:.1500}")


_unread: dict[int, list[Message]] = {}


async def receive(socket: WebsocketCommunicator, timeout: float) -> Message:  # noqa: ASYNC109
    """The next message, with a ``batch`` taken apart as the page does."""
    unread = _unread.setdefault(id(socket), [])
    while not unread:
        message = await socket.receive_json_from(timeout=timeout)
        unread.extend(message["messages"] if message.get("type") == "batch" else [message])
    return unread.pop(0)


def counts_of(message: Message, slug: str) -> dict[str, int] | None:
    """A queue's counts in a counts message, every state filled in (the overview's leave out
    the states without jobs)."""
    if message.get("type") != "counts":
        return None
    found = next((q["counts"] for q in message["queues"] if q["slug"] == slug), None)
    return None if found is None else {state: found.get(state, 0) for state in STATES}


async def run_peer(peer: Peer, *args: str) -> Any:
    return await asyncio.to_thread(peer, *args)
