"""The web process's background services under daphne, as in production: the live reader runs
from the server's start with no page open, and stopping the server stops every service.

And in this process: a stopped service has ended, and closed its own Redis clients, by the time
its stop returns. What ran on after its stop (a follower still releasing its lease, an action
still being cancelled) kept its connections open past the test's event loop: the garbage
collector then found them in a later test ("unclosed Connection", "loop is closed"), on a
loaded machine only."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
import websockets

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
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

LIVE_LEASE = "bullpen:live:lease"
ACTIONS_LEASE = "bullpen:actions:lease"


@pytest.fixture
def server(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    # Unclosed sockets and transports are reported, not ignored as they are by default.
    env = {"PYTHONWARNINGS": "always::ResourceWarning"}
    started = start_bullpen(redis_server.url, tmp_path / "daphne.log", env)
    yield started
    stop_bullpen(started)


def holder_pid(redis_client: Any, key: str) -> int | None:
    owner = redis_client.get(key)
    return int(owner.split(":")[1]) if owner else None


def until(check: Callable[[], bool], what: str, within: float = 20) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_live_reader_runs_from_the_server_start_with_no_page_open(
    server: LiveServer, redis_client: Any, peer: Peer
) -> None:
    # No request and no socket: the server's start alone started the reader, which took the
    # deployment's one lease (the bulk-action runner took its own).
    pid = server.process.pid
    until(lambda: holder_pid(redis_client, LIVE_LEASE) == pid, "the reader never took the lease")
    until(lambda: holder_pid(redis_client, ACTIONS_LEASE) == pid, "no bulk-action runner")
    # ... and keeps it, nobody watching: Redis itself reports each renewal (a PEXPIRE of the
    # lease), and nothing else happens to it meanwhile: it never runs out, is never taken
    # afresh (a SET), written over or given back. How soon each renewal comes is the loaded
    # machine's business, not this test's.
    assert lease_renewed(redis_client, times=3) == ["expire"] * 3
    assert holder_pid(redis_client, LIVE_LEASE) == pid

    peer("add-bulk", "--queue", "mail", "--name", "m", "--count", "3")
    said = asyncio.run(status_and_waiting(server, "mail", 3))
    # The process answered the page's handshake with the reader's finding from before it
    # connected: a reader started by the page has found nothing yet then (it tells later, in
    # a status message of its own, with its time).
    assert said == {"type": "status", "redis": "ok"}
    assert holder_pid(redis_client, LIVE_LEASE) == pid


def lease_renewed(redis_client: Any, times: int, within: float = 60) -> list[str]:
    """What Redis reports happening to the live lease (keyspace notifications) until it
    reports ``times`` renewals, or anything else: the events in order."""
    db = redis_client.connection_pool.connection_kwargs.get("db", 0)
    events: list[str] = []
    # The session's Redis: its notifications are turned off again for the other tests.
    redis_client.config_set("notify-keyspace-events", "Kg$x")
    try:
        with redis_client.pubsub() as pubsub:
            pubsub.subscribe(f"__keyspace@{db}__:{LIVE_LEASE}")
            deadline = time.monotonic() + within
            while events.count("expire") < times and set(events) <= {"expire"}:
                assert time.monotonic() < deadline, f"not renewed in {within} s: {events}"
                message = pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is not None:
                    events.append(message["data"])
    finally:
        redis_client.config_set("notify-keyspace-events", "")
    return events


async def status_and_waiting(server: LiveServer, queue: str, waiting: int) -> dict[str, Any]:
    """The first status the page hears that is not a reader's beat, once its counts show
    ``waiting`` jobs of ``queue``."""
    ws_url = server.url.replace("http://", "ws://") + "/ws/bullpen/"
    statuses: list[dict[str, Any]] = []
    async with websockets.connect(ws_url, origin=server.url) as socket:  # type: ignore[arg-type]
        await socket.send(json.dumps({"watch": "overview"}))
        async with asyncio.timeout(20):
            while True:
                message = json.loads(await socket.recv())
                for part in message["messages"] if message.get("type") == "batch" else [message]:
                    if part.get("type") == "status" and not part.get("beat"):
                        statuses.append(part)
                    for entry in part.get("queues", []) if part.get("type") == "counts" else []:
                        if entry["slug"] == queue and entry["counts"].get("waiting") == waiting:
                            return statuses[0] if statuses else {"status": "none heard"}


def test_stopping_the_server_stops_every_service(server: LiveServer, redis_client: Any) -> None:
    pid = server.process.pid
    until(lambda: holder_pid(redis_client, LIVE_LEASE) == pid, "the reader never took the lease")
    until(lambda: holder_pid(redis_client, ACTIONS_LEASE) == pid, "no bulk-action runner")
    stop_bullpen(server)
    assert server.process.returncode == 0
    # Each service ended its own way: the leases were given back, not left to run out.
    assert redis_client.get(LIVE_LEASE) is None
    assert redis_client.get(ACTIONS_LEASE) is None
    log = server.log.read_text()
    assert "Task was destroyed but it is pending" not in log
    assert "Unclosed" not in log and "ResourceWarning" not in log


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
