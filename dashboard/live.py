"""Wiring the queue layer's follower to Channels: topics become channel-layer groups.

The follower runs once per server process (started by the first websocket that connects) and
only the process holding the live lease reads Redis; every process gets the messages through
the channel layer, once per process, and hands them to its own pages (fanout.py).
"""

from __future__ import annotations

import asyncio
import hashlib

from channels.layers import get_channel_layer

from dashboard import background, fanout
from queues.cancelling import cancel_and_wait
from queues.follower import Follower
from queues.live_protocol import LiveMessage, Topic

_running: dict[asyncio.AbstractEventLoop, tuple[Follower, asyncio.Task[None]]] = {}


def group_name(topic: Topic) -> str:
    """Channel-layer group names allow only ASCII letters, digits, ``-_.``: hash the rest."""
    kind = topic[0]
    if len(topic) == 1:
        return f"bullpen.{kind}"
    digest = hashlib.sha256("\x00".join(topic[1:]).encode()).hexdigest()[:32]
    return f"bullpen.{kind}.{digest}"


async def publish(topic: Topic, message: LiveMessage) -> None:
    """Data to every process's hub, which renders it once per kind of viewer (fanout.py)."""
    layer = get_channel_layer()
    if layer is not None:
        group = group_name(topic)
        await layer.group_send(group, {"type": "live.message", "group": group, "payload": message})


def ensure_started() -> Follower:
    background.ensure_runner()  # bulk actions a stopped process left resume with the first page
    loop = asyncio.get_running_loop()
    running = _running.get(loop)
    if running is None or running[1].done():
        follower = Follower(publish)
        task = loop.create_task(follower.run(), name="bullpen-live-follower")
        running = (follower, task)
        _running[loop] = running
    return running[0]


async def stop() -> None:
    """Stop this loop's follower and fan-out (tests, shutdown)."""
    running = _running.pop(asyncio.get_running_loop(), None)
    if running is not None:
        await cancel_and_wait(running[1])
    await fanout.close()
