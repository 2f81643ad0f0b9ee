"""Helpers that several test modules share.

Moved here from ``tests.live.test_live``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from channels.testing import WebsocketCommunicator

from dashboard.live import channel_groups
from queues.live.protocol import LiveMessage, Topic
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


async def until(what: str, done: Callable[[], bool], timeout: float = 15) -> None:  # noqa: ASYNC109
    """Poll ``done`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        await asyncio.sleep(0.05)


async def found_within(check: Callable[[], Any], within: float = 20) -> Any:
    """Poll ``check`` until it gives something true, and give that; fail after ``within`` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"not within {within}s")


async def publish_nowhere(topic: Topic, message: LiveMessage) -> None:
    """A follower's publish for tests that read the follower, not what it sends."""


async def follower_tails_log(job_id: str) -> None:
    """This process's live follower has noted the job's log length: from its next pass on, the
    job's state, progress and new log lines reach the sockets that watch it."""
    follower = channel_groups.ensure_started()
    await until(
        f"the follower tails job {job_id}'s log",
        lambda: any(job == job_id for _, job in follower.logs.lengths),
    )


# Where each server process publishes what its pages watch (queues/live/interest.py).
INTEREST_KEY = "bullpen:live:interest"


async def server_watches(redis_client: Any, *, queue: str = "", job: str = "") -> None:
    """A live server (another process) has taken a page's watch of ``queue`` or of ``job``:
    its follower publishes what its pages watch in the same pass in which it starts serving it
    (read through the test's own Redis connection, not written)."""

    def published() -> bool:
        for raw in redis_client.hgetall(INTEREST_KEY).values():
            entry = json.loads(raw)
            if queue and queue in entry["queues"]:
                return True
            if job and any(watched == job for _, watched in entry["jobs"]):
                return True
        return False

    await until(f"a server watches {queue or job}", published)
