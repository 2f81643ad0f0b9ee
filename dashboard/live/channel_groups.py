"""Wiring the queue layer's follower to Channels: topics become channel-layer groups.

A follower runs per Redis connection in each server process (and a reader of counts per
PostgreSQL store, queues/postgres/live_counts.py), under this module's supervisor,
which the process's services start (dashboard/services/lifecycle.py: with the server, or with
the first websocket where the server's start cannot be hooked); on each connection only the
process holding its live lease reads that Redis (and the default connection's holder sends
alerts: dashboard/alerts/sender.py); every
process gets the messages through the channel layer, once per process, and hands them to its
own pages (fanout.py). What the process's pages watch is one registry per process, kept by its
supervisor: the websocket consumers write it, the follower publishes it.

Without a Redis connection (PostgreSQL stores alone) there is no lease and no shared registry:
every process reads each store for its own pages, LISTENing to BullMQ's notifications itself,
and hands the messages to its own pages (:func:`publish_here`). A store then serves one
reader per server process, whatever the number of pages (bench/RESULTS.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from channels.layers import get_channel_layer

from dashboard.live import fanout
from dashboard.services import registry
from dashboard.services.registry import Slot
from queues.cancelling import cancel_and_wait, finish_despite_cancel
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.protocol import LiveMessage, Topic
from queues.redis import connections

if TYPE_CHECKING:
    from queues.postgres.live_counts import PostgresLiveCounts

log = logging.getLogger("bullpen.live")


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


async def publish_here(topic: Topic, message: LiveMessage) -> None:
    """Data to this process's own pages alone: a store's reader that serves only them."""
    await fanout.hub().hand_out(group_name(topic), message)


# What runs beside the followers while they run (the services' owner names it).
Beside = Callable[[], Coroutine[Any, Any, None]]


class Supervisor:
    """Runs this process's followers, one per Redis connection, and starts a fresh one, with
    backoff, if one ever ends: live updates must not stop for good because of one unforeseen
    error, and one connection's trouble leaves the others' updates alone."""

    def __init__(self, interest: Interest, beside: Sequence[Beside] = ()) -> None:
        self.interest = interest
        self.beside = tuple(beside)
        self.followers = {
            # Followers read Redis' event streams: a Postgres store has none of its own here.
            name: Follower(publish, interest, connection=name, send_time=fanout.hub().send_time)
            for name in connections.redis_names()
        }
        self.restarts = 0
        # Each Postgres store's counts, read from BullMQ's notifications (queues/postgres/).
        self.stores: dict[str, Any] = {
            name: _store_reader(name, interest) for name in connections.postgres_names()
        }

    @property
    def follower(self) -> Follower:
        """The default connection's follower."""
        return next(iter(self.followers.values()))

    async def run(self) -> None:
        parts = [
            asyncio.ensure_future(part)
            for part in (
                *(self._keep_running(name) for name in self.followers),
                *(self._keep_reading(name) for name in self.stores),
                *(beside() for beside in (self.beside if self.followers else ())),
            )
        ]
        try:
            await asyncio.gather(*parts)
        finally:
            # gather ends with the first part that ends: when stopped, the one quickest to
            # end cancelled (the lists' maker), while the followers still close their Redis
            # clients. Those must end before the supervisor does, or they run on past its stop
            # (and past the event loop, their connections left open).
            await finish_despite_cancel(cancel_and_wait(*parts))

    async def _keep_reading(self, name: str) -> None:
        restarts = 0
        while True:
            try:
                await self.stores[name].run()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the store is away or refused: try again later
                log.warning("live updates: the reader of %s stopped: %s", name, error)
            restarts += 1
            await asyncio.sleep(min(30.0, 0.5 * 2 ** min(restarts, 6)))
            self.stores[name] = _store_reader(name, self.interest)

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
            self.followers[name] = Follower(
                publish, self.interest, connection=name, send_time=fanout.hub().send_time
            )


def _store_reader(connection: str, interest: Interest) -> PostgresLiveCounts:
    from queues.postgres.live_counts import PostgresLiveCounts  # loads the driver: Postgres only

    if connections.state_on_redis():
        return PostgresLiveCounts(publish, connection, registry=interest)
    return PostgresLiveCounts(publish_here, connection, registry=interest, shared=False)


LIVE_READER: Slot[Supervisor] = Slot("live-reader")


def start(beside: Sequence[Beside] = ()) -> Supervisor:
    """This loop's supervisor, its followers running (started again if it ended), and
    ``beside`` running while they do."""

    def make(ended: Supervisor | None) -> tuple[Supervisor, Coroutine[Any, Any, None]]:
        # Pages still open keep their watches when a new supervisor takes over.
        supervisor = Supervisor(ended.interest if ended is not None else Interest(), beside)
        return supervisor, supervisor.run()

    return registry.ensure(LIVE_READER, make)


def holds_lease(loop: asyncio.AbstractEventLoop) -> bool:
    """``loop``'s running follower (whichever the supervisor runs now) holds the lease."""
    running = registry.running_in(loop, LIVE_READER)
    return running is not None and bool(running.followers) and running.follower.leader


def ensure_started() -> Follower:
    """This process's follower of the default connection, every follower started."""
    return start().follower


def followers() -> list[Follower]:
    """This process's followers, one per connection (the default one first), started."""
    return list(start().followers.values())


def running_followers() -> list[Follower]:
    """This loop's followers when they run, without starting them (a page read alone does
    not start the live readers)."""
    supervisor = registry.running(LIVE_READER)
    return [] if supervisor is None else list(supervisor.followers.values())


def interest() -> Interest:
    """What this process's pages watch (the registry its follower publishes), started with it."""
    return start().interest


async def stop() -> None:
    """Stop this loop's followers and fan-out."""
    await registry.stop(LIVE_READER)
    await fanout.close()
