"""A stopped service has ended, and closed its own Redis clients, by the time its stop returns.

What ran on after its stop (a follower still releasing its lease, an action still being cancelled)
kept its connections open past the test's event loop: the garbage collector then found them in
a later test ("unclosed Connection", "loop is closed"), on a loaded machine only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any

import pytest
import redis.asyncio as aioredis

from dashboard.live import channel_groups, ready_lists
from queues.alerts.watch import AlertWatch
from queues.bulk.executor import Runner
from queues.bulk.record import ActionRecord
from queues.cancelling import RECANCEL_AFTER, cancel_and_wait, finish_despite_cancel
from queues.live import follower as follower_module
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.leadership import Leadership
from queues.live.settings import LiveSettings
from tests.support.live_reads import found_within, publish_nowhere


def open_connections(client: aioredis.Redis | None) -> list[Any]:
    if client is None:
        return []
    pool = client.connection_pool
    every = [*pool._available_connections, *pool._in_use_connections]  # type: ignore[attr-defined]
    return [connection for connection in every if connection.is_connected]


def others_running() -> list[asyncio.Task[Any]]:
    return [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]


async def ends_slowly_when_cancelled() -> None:
    """A task whose own clean-up outlasts a stopper's re-cancel (a slow pass on a loaded
    machine)."""
    try:
        await asyncio.sleep(60)
    finally:
        await finish_despite_cancel(asyncio.sleep(RECANCEL_AFTER * 2.5))


async def test_the_live_reader_has_ended_its_followers_when_its_stop_returns() -> None:
    # Its lists' maker ends at once when cancelled; the followers only once they closed their
    # clients. The supervisor ended with the first of them, its followers still closing.
    supervisor = channel_groups.start(beside=(ready_lists.keep_ready,))
    follower = supervisor.follower
    await found_within(lambda: follower.leader)
    probe = follower.probe
    assert open_connections(probe)
    await channel_groups.stop()
    assert others_running() == []
    assert open_connections(probe) == []


async def test_a_follower_whose_clean_up_is_given_up_still_closes_its_clients(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A clean-up given up after its bound (here its lease's release stalls past it): the
    # follower's clients are closed all the same. (A stalled Redis command would not do:
    # redis-py drops a connection whose command was cancelled, whatever the follower does.)
    async def stalls(self: Leadership) -> None:
        await asyncio.sleep(60)

    follower = Follower(publish_nowhere, Interest(), LiveSettings(lease_ttl_ms=2000))
    running = asyncio.ensure_future(follower.run())
    try:
        await found_within(lambda: follower.leader)
    finally:
        monkeypatch.setattr(Leadership, "release", stalls)
        bounded = functools.partial(finish_despite_cancel, most=RECANCEL_AFTER)
        monkeypatch.setattr(follower_module, "finish_despite_cancel", bounded)
        probe = follower.probe
        async with asyncio.timeout(10):
            await cancel_and_wait(running)
    assert open_connections(probe) == []
    assert open_connections(follower.streams._client) == []


class NoHooks:
    async def progress(self, record: ActionRecord) -> None:
        pass

    async def finished(self, record: ActionRecord) -> None:
        pass


async def test_the_bulk_runner_has_ended_its_actions_when_its_stop_returns() -> None:
    runner = Runner(NoHooks())
    running = asyncio.ensure_future(runner.run())
    action = asyncio.ensure_future(ends_slowly_when_cancelled())
    runner._tasks["slow"] = action
    await asyncio.sleep(0.1)
    async with asyncio.timeout(10):
        await cancel_and_wait(running)
    assert action.done()


async def test_the_alert_sender_has_ended_its_sends_when_its_stop_returns() -> None:
    async def deliver(*args: Any) -> None:
        pass

    watch = AlertWatch(deliver, lambda: False)
    running = asyncio.ensure_future(watch.run())
    sending = asyncio.ensure_future(ends_slowly_when_cancelled())
    watch._sending[("mail", "failed")] = sending  # type: ignore[index]
    await asyncio.sleep(0.1)
    async with asyncio.timeout(10):
        await cancel_and_wait(running)
    assert sending.done()
    with contextlib.suppress(asyncio.CancelledError):
        await sending
