"""Under daphne a live message is framed once and its bytes written to every open socket."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tests.support.live_reads import watch_overview
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer


async def counts_frames(page: Any, queue: str, waiting: int, linger: float = 1.5) -> set[str]:
    """The texts of every frame showing ``waiting`` jobs waiting in ``queue`` from the first
    such frame to ``linger`` seconds after it: what the reader sent every socket (after an
    event, or a re-read of the queue) is among them, with any catch-up of the socket's own."""
    texts = {await counts_frame(page, queue, waiting)}
    deadline = time.monotonic() + linger
    while (left := deadline - time.monotonic()) > 0:
        try:
            raw = await asyncio.wait_for(page.recv(), timeout=left)
        except TimeoutError:
            break
        if isinstance(raw, str) and _shows(raw, queue, waiting):
            texts.add(raw)
    return texts


def _shows(raw: str, queue: str, waiting: int) -> bool:
    message = json.loads(raw)
    for part in message["messages"] if message.get("type") == "batch" else [message]:
        if part.get("type") != "counts":
            continue
        for entry in part["queues"]:
            if entry["slug"] == queue and entry["counts"].get("waiting", 0) == waiting:
                return True
    return False


async def counts_frame(page: Any, queue: str, waiting: int, within: float = 20) -> str:
    """The text of the first frame whose counts show ``waiting`` jobs waiting in ``queue``."""
    deadline = time.monotonic() + within
    while True:
        raw = await asyncio.wait_for(page.recv(), timeout=deadline - time.monotonic())
        assert isinstance(raw, str), "a live message must arrive as a text frame"
        if _shows(raw, queue, waiting):
            return raw


async def test_every_socket_gets_the_same_frame_and_a_closed_one_stops_nobody(
    bullpen_server: LiveServer, peer: Peer
) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    sockets = [await watch_overview(bullpen_server) for _ in range(4)]
    for page in sockets:
        await counts_frame(page, "mail", 1)

    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
    seen = [await counts_frames(page, "mail", 2) for page in sockets]
    # One rendering, one framing: the same text, written once to each socket (a socket whose
    # watch was answered late may also get its own catch-up with those counts).
    assert set.intersection(*seen), seen

    # A page that went away is left out; the others keep getting their messages.
    await sockets[0].close()
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "c", "--data", "{}")
    for page in sockets[1:]:
        await counts_frame(page, "mail", 3)
    for page in sockets[1:]:
        await page.close()
    assert "Traceback" not in bullpen_server.log.read_text()
