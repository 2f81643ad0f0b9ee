"""Live updates through faults, with real processes: the channel layer's Redis restarted under
an open page, the queues' Redis at maxmemory. Updates resume by themselves, pages say when
they may be stale, and the log says what failed once, not on every pass."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels.testing import WebsocketCommunicator
from playwright.async_api import expect

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from tests.support.browser import chromium
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer


@pytest.fixture
def layer_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def server_with_redis_layer(
    redis_server: RedisServer, layer_redis: RedisServer, tmp_path: Path
) -> Iterator[LiveServer]:
    """Bullpen whose channel layer is a Redis of its own (as with several server processes)."""
    env = {"BULLPEN_TEST_CHANNEL_LAYER_URL": layer_redis.url}
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", env)
    yield server
    stop_bullpen(server)


async def next_counts(socket: Any, queue: str, within: float) -> dict[str, int]:
    deadline = time.monotonic() + within
    while True:
        raw = await asyncio.wait_for(socket.recv(), timeout=max(0.05, deadline - time.monotonic()))
        message = json.loads(raw)
        for part in message["messages"] if message.get("type") == "batch" else [message]:
            if part.get("type") == "counts":
                for entry in part["queues"]:
                    if entry["slug"] == queue:
                        counts: dict[str, int] = entry["counts"]
                        return counts


async def waiting_reaches(socket: Any, queue: str, count: int, within: float) -> float:
    """Seconds until the socket shows ``count`` waiting jobs in ``queue``."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        remaining = within - (time.monotonic() - started)
        try:
            counts = await next_counts(socket, queue, remaining)
        except TimeoutError:
            break
        if counts.get("waiting", 0) == count:
            return time.monotonic() - started
    raise AssertionError(f"{queue} never showed {count} waiting within {within} s")


async def test_updates_resume_after_the_channel_layer_redis_restarts(
    server_with_redis_layer: LiveServer, layer_redis: RedisServer, peer: Peer
) -> None:
    server = server_with_redis_layer
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    ws_url = server.url.replace("http://", "ws://") + "/ws/bullpen/"
    socket = await websockets.connect(ws_url, origin=server.url)  # type: ignore[arg-type]
    await socket.send(json.dumps({"watch": "overview"}))
    await waiting_reaches(socket, "mail", 1, 20)

    layer_redis.stop()
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
    await asyncio.sleep(3)  # the follower meets the outage: its sends fail
    layer_redis.start()  # same port, empty: the layer forgot every subscription
    back = time.monotonic()
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "c", "--data", "{}")
    took = await waiting_reaches(socket, "mail", 3, 15)
    resumed = time.monotonic() - back
    print(f"updates resumed {resumed:.1f} s after the channel layer's Redis came back")
    assert resumed < 5 + took  # the same socket: no new connection was needed
    await socket.close()

    log = server.log.read_text()
    # The queues' Redis was fine all along: the pages were never told it was unreachable.
    assert "Redis unreachable" not in log
    assert log.count("the channel layer refused a message") <= 1
    assert "live update failed" not in log and "the follower stopped" not in log
    # The layer library's own traceback for a lost connection: once, not every second.
    assert log.count("Unexpected exception in receive task") <= 1


@pytest.mark.browser
async def test_a_page_says_stale_when_updates_stop_and_live_when_they_resume(
    server_with_redis_layer: LiveServer,
    layer_redis: RedisServer,
    peer: Peer,
    chromium_path: str,
    tmp_path: Path,
) -> None:
    server = server_with_redis_layer
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    async with chromium(chromium_path) as browser:
        page = await browser.new_page()
        await page.goto(f"{server.url}/queues/")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("window.bullpenNoReload = true")
        layer_redis.stop()
        # No heartbeat reaches the page: it stops saying "live" and greys its figures. Whether
        # the socket stays open (silence) or the server closes it (the layer failed) is a race.
        await expect(page.locator("#live-status")).to_have_text(
            re.compile(r"^(stale|reconnecting…)$"), timeout=15000
        )
        await expect(page.locator("body")).to_have_class("stale")
        layer_redis.start()
        await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
        await expect(page.locator("#live-status")).to_have_text("live", timeout=15000)
        waiting = page.locator('tr[data-queue="mail"] td[data-state="waiting"]')
        await expect(waiting).to_have_text("2", timeout=15000)
        assert await page.evaluate("window.bullpenNoReload === true")
        await browser.close()


pytestmark = pytest.mark.django_db(transaction=True)


async def test_at_maxmemory_the_follower_still_reads_and_pushes_counts(
    peer: Peer,
    redis_client: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "full", "--name", "a", "--data", "{}")
    await asyncio.to_thread(peer, "add", "--queue", "full", "--name", "b", "--data", "{}")
    used = int(redis_client.info("memory")["used_memory"])
    redis_client.config_set("maxmemory-policy", "noeviction")
    redis_client.config_set("maxmemory", str(used))  # every write is refused from now on
    socket = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
    try:
        caplog.set_level("INFO", logger="bullpen.live")
        connected, _ = await socket.connect()  # the follower starts now, at maxmemory
        assert connected
        await socket.send_json_to({"watch": "overview"})
        deadline = time.monotonic() + 15
        seen = None
        while time.monotonic() < deadline:
            message = await socket.receive_json_from(timeout=15)
            parts = message["messages"] if message.get("type") == "batch" else [message]
            for part in parts:
                if part.get("type") == "counts":
                    seen = {e["slug"]: e["counts"] for e in part["queues"]}
            if seen and seen.get("full", {}).get("waiting") == 2:
                break
        assert seen is not None and seen["full"].get("waiting") == 2
        follower = channel_groups.ensure_started()
        for _ in range(50):  # it reads the event streams though it could not write a lease
            if follower.leader:
                break
            await asyncio.sleep(0.1)
        assert follower.leader
        assert redis_client.get("bullpen:live:lease") is None
        await asyncio.sleep(3)  # several passes: each refusal is said once
        refusals = [r for r in caplog.records if "refused" in r.getMessage()]
        assert 1 <= len(refusals) <= 3
        assert not [r for r in caplog.records if r.exc_info]
    finally:
        redis_client.config_set("maxmemory", "0")
        await socket.disconnect()
        await channel_groups.stop()
