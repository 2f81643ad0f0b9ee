"""Several server processes: one reads Redis for live updates, another takes over when it dies."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_reads import watch_overview
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, http_get, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

LEASE_KEY = "bullpen:live:lease"


@pytest.fixture
def two_servers(redis_server: RedisServer, tmp_path: Path) -> Iterator[list[LiveServer]]:
    env = {"BULLPEN_TEST_CHANNEL_LAYER_URL": redis_server.url.replace("/0", "/1")}
    servers = [start_bullpen(redis_server.url, tmp_path / f"daphne-{i}.log", env) for i in (1, 2)]
    yield servers
    for server in servers:
        stop_bullpen(server)


async def wait_for_waiting(socket: Any, queue: str, count: int, within: float = 20) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        raw = await asyncio.wait_for(socket.recv(), timeout=deadline - time.monotonic())
        message = json.loads(raw)
        for part in message["messages"] if message.get("type") == "batch" else [message]:
            if part.get("type") == "counts":
                for entry in part["queues"]:
                    if entry["slug"] == queue and entry["counts"].get("waiting", 0) == count:
                        return
    raise AssertionError(f"{queue} never showed {count} waiting")


def owner_pid(redis_client: Any) -> int | None:
    owner = redis_client.get(LEASE_KEY)
    return int(owner.split(":")[1]) if owner else None


async def lease_taken_by(redis_client: Any, server: LiveServer, within: float = 15) -> None:
    """Waits until ``server`` holds the live lease: a page's first counts may be read before its
    process's reader has taken it."""
    deadline = time.monotonic() + within
    while owner_pid(redis_client) != server.process.pid:
        assert time.monotonic() < deadline, f"the lease is held by {owner_pid(redis_client)}"
        await asyncio.sleep(0.1)


async def test_one_reader_and_takeover(
    two_servers: list[LiveServer], peer: Peer, redis_client: Any
) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    sockets = [await watch_overview(server) for server in two_servers]
    for socket in sockets:
        await wait_for_waiting(socket, "mail", 1)
    pids = {server.process.pid for server in two_servers}
    leader = owner_pid(redis_client)
    assert leader in pids  # exactly one process holds the lease and reads the streams

    # Both pages hear of a new job, though only one process reads Redis.
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
    for socket in sockets:
        await wait_for_waiting(socket, "mail", 2)

    # The leader dies without releasing its lease; the other takes over within seconds.
    dead = next(s for s in two_servers if s.process.pid == leader)
    survivor_index = 1 - two_servers.index(dead)
    os.kill(leader, signal.SIGKILL)
    dead.process.wait(10)
    started = time.monotonic()
    while owner_pid(redis_client) != two_servers[survivor_index].process.pid:
        assert time.monotonic() - started < 15, "no process took over the live lease"
        await asyncio.sleep(0.2)
    took_over = time.monotonic() - started
    assert took_over < 10
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "c", "--data", "{}")
    await wait_for_waiting(sockets[survivor_index], "mail", 3)
    for socket in sockets:
        await socket.close()


async def first_counts(socket: Any, queue: str, within: float = 20) -> dict[str, int]:
    """The counts of ``queue`` in the first counts message that names it."""
    deadline = time.monotonic() + within
    while True:
        raw = await asyncio.wait_for(socket.recv(), timeout=deadline - time.monotonic())
        message = json.loads(raw)
        for part in message["messages"] if message.get("type") == "batch" else [message]:
            if part.get("type") == "counts":
                for entry in part["queues"]:
                    if entry["slug"] == queue:
                        return dict(entry["counts"])


async def test_a_paused_reader_hands_no_old_counts_to_pages(
    two_servers: list[LiveServer], peer: Peer, redis_client: Any
) -> None:
    # The first server reads the streams and holds every queue's counts for its pages.
    first, second = two_servers
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    watching_first = await watch_overview(first)
    await wait_for_waiting(watching_first, "mail", 1)
    await lease_taken_by(redis_client, first)
    watching_second = await watch_overview(second)
    await wait_for_waiting(watching_second, "mail", 1)

    # It is paused for longer than its lease (a stop signal; a long collection or a stalled VM
    # does the same): the other server takes the lease, and the queue fills meanwhile.
    os.kill(first.process.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        while owner_pid(redis_client) != second.process.pid:
            assert time.monotonic() - started < 15, "no process took over the live lease"
            await asyncio.sleep(0.2)
        await asyncio.to_thread(
            peer, "add-bulk", "--queue", "mail", "--name", "b", "--count", "484"
        )
        await wait_for_waiting(watching_second, "mail", 485)
    finally:
        os.kill(first.process.pid, signal.SIGCONT)

    # A page that connects (or reconnects) to the paused server as soon as it runs again gets
    # Redis's counts, not the ones it held when it stopped.
    page = await watch_overview(first)
    assert (await first_counts(page, "mail")).get("waiting") == 485
    for socket in (page, watching_first, watching_second):
        await socket.close()


@pytest.fixture
def two_scanning_servers(redis_server: RedisServer, tmp_path: Path) -> Iterator[list[LiveServer]]:
    """Two processes that keep their scan of the keyspace for 30 s, as a site does."""
    env = {
        "BULLPEN_TEST_CHANNEL_LAYER_URL": redis_server.url.replace("/0", "/1"),
        "BULLPEN_TEST_DISCOVERY_INTERVAL": "30",
    }
    servers = [start_bullpen(redis_server.url, tmp_path / f"daphne-{i}.log", env) for i in (1, 2)]
    yield servers
    for server in servers:
        stop_bullpen(server)


async def listed_queues(server: LiveServer) -> list[str]:
    status, body = await asyncio.to_thread(http_get, server.url + "/queues/api/queues/")
    assert status == 200, body
    return [queue["name"] for queue in json.loads(body)["queues"]]


async def test_every_process_lists_a_queue_the_reader_saw_created(
    two_scanning_servers: list[LiveServer], peer: Peer, redis_client: Any
) -> None:
    first, second = two_scanning_servers
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    overview = await watch_overview(first)  # the first process reads the streams
    await wait_for_waiting(overview, "mail", 1)
    await lease_taken_by(redis_client, first)
    assert await listed_queues(second) == ["mail"]  # the second keeps this scan for 30 s

    # Node writes a new queue: once the reader has seen it, the other process lists it too.
    await asyncio.to_thread(peer, "add", "--queue", "fresh", "--name", "a", "--data", "{}")
    await wait_for_waiting(overview, "fresh", 1)
    seen = time.monotonic()
    while "fresh" not in await listed_queues(second):
        assert time.monotonic() - seen < 2, "the other process does not list the new queue"
        await asyncio.sleep(0.1)
    await overview.close()
