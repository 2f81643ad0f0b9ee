"""Wiring the queue layer's follower to Channels: topics become channel-layer groups.

A follower runs per Redis connection in each server process (started by the first websocket
that connects); on each connection only the process holding its live lease reads that Redis
(and the default connection's holder sends alerts: alert_sender.py); every
process gets the messages through the channel layer, once per process, and hands them to its
own pages (fanout.py). What the process's pages watch is one registry per process, kept by its
supervisor: the websocket consumers write it, the follower publishes it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging

from channels.layers import get_channel_layer

from dashboard.alerts import sender
from dashboard.bulk import launch
from dashboard.live import fanout
from queues.cancelling import cancel_and_wait
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.protocol import LiveMessage, Topic
from queues.redis import connections

log = logging.getLogger("bullpen.live")

_running: dict[asyncio.AbstractEventLoop, tuple[Supervisor, asyncio.Task[None]]] = {}


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


class Supervisor:
    """Runs this process's followers, one per Redis connection, and starts a fresh one, with
    backoff, if one ever ends: live updates must not stop for good because of one unforeseen
    error, and one connection's trouble leaves the others' updates alone."""

    def __init__(self, interest: Interest) -> None:
        self.interest = interest
        self.followers = {
            name: Follower(publish, interest, connection=name) for name in connections.names()
        }
        self.restarts = 0

    @property
    def follower(self) -> Follower:
        """The default connection's follower."""
        return next(iter(self.followers.values()))

    async def run(self) -> None:
        await asyncio.gather(*(self._keep_running(name) for name in self.followers))

    async def _keep_running(self, name: str) -> None:
        restarts = 0
        while True:
            try:
                await self.followers[name].run()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("live updates: the follower of %s stopped; starting a new one", name)
            else:
                log.warning("live updates: the follower of %s ended; starting a new one", name)
            restarts += 1
            self.restarts += 1
            await asyncio.sleep(min(30.0, 0.5 * 2 ** min(restarts, 6)))
            self.followers[name] = Follower(publish, self.interest, connection=name)


def _supervisor() -> Supervisor:
    launch.ensure_runner()  # bulk actions a stopped process left resume with the first page
    loop = asyncio.get_running_loop()
    running = _running.get(loop)
    if running is None or running[1].done():
        # Pages still open keep their watches when a new supervisor takes over.
        interest = running[0].interest if running is not None else Interest()
        supervisor = Supervisor(interest)
        task = loop.create_task(supervisor.run(), name="bullpen-live-follower")
        running = (supervisor, task)
        _running[loop] = running
    sender.ensure_running(lambda: _holds_lease(loop))
    return running[0]


def _holds_lease(loop: asyncio.AbstractEventLoop) -> bool:
    """This loop's running follower (whichever the supervisor runs now) holds the lease."""
    running = _running.get(loop)
    return running is not None and not running[1].done() and running[0].follower.leader


def ensure_started() -> Follower:
    """This process's follower of the default connection, every follower started."""
    return _supervisor().follower


def followers() -> list[Follower]:
    """This process's followers, one per connection (the default one first), started."""
    return list(_supervisor().followers.values())


def interest() -> Interest:
    """What this process's pages watch (the registry its follower publishes), started with it."""
    return _supervisor().interest


async def stop() -> None:
    """Stop this loop's follower and fan-out (tests, shutdown)."""
    running = _running.pop(asyncio.get_running_loop(), None)
    await sender.stop()
    if running is not None:
        await cancel_and_wait(running[1])
    await fanout.close()
