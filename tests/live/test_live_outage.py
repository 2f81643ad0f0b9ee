"""How soon open pages hear that Redis went away: the live follower's probes (its stream reads
and its lease) are not retried, so the follower says "unreachable" at its first failed read,
while page reads and actions keep their retries. Redis "goes away" behind a TCP gate that cuts
every connection at once and counts each one tried after that."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from django.test import override_settings
from redis.exceptions import ConnectionError as RedisConnectionError

from queues.cancelling import cancel_and_wait
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.settings import LiveSettings
from queues.redis.clients import client_options, get_client
from tests.support.live_reads import found_within, publish_nowhere
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer


class Gate:
    """A TCP proxy to Redis. ``shut()`` cuts every connection through it, and from then on
    closes each new one at once (as a Redis that went away does), counting them."""

    def __init__(self, redis_port: int) -> None:
        self.redis_port = redis_port
        self.shut_at: float | None = None
        self.tried_while_shut = 0
        self._open: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self.shut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def shut(self) -> None:
        self.shut_at = time.monotonic()
        for writer in self._open:
            writer.transport.abort()
        self._open.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.shut_at is not None:
            self.tried_while_shut += 1
            writer.transport.abort()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.redis_port)
        self._open += [writer, up_writer]
        await asyncio.gather(
            self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True
        )

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            writer.transport.abort()


@contextlib.asynccontextmanager
async def opened_gate(redis_server: RedisServer) -> AsyncIterator[Gate]:
    found = Gate(redis_server.port)
    await found.start()
    try:
        yield found
    finally:
        await found.close()


@pytest.fixture
async def gate(redis_server: RedisServer) -> AsyncIterator[Gate]:
    async with opened_gate(redis_server) as found:
        yield found


@pytest.fixture
async def page_gate(redis_server: RedisServer) -> AsyncIterator[Gate]:
    """A gate of the page's own, so that each side's tries are counted apart."""
    async with opened_gate(redis_server) as found:
        yield found


async def test_open_pages_hear_at_once_that_redis_went_away(
    peer: Peer, gate: Gate, page_gate: Gate, bullpen_settings: dict[str, Any]
) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "m")
    registry = Interest()
    registry.watch_queue("mail")  # a page is open: the follower reads mail's events
    with override_settings(
        BULLPEN={**bullpen_settings, "REDIS_URL": f"redis://127.0.0.1:{gate.port}/0"}
    ):
        follower = Follower(publish_nowhere, registry, LiveSettings(lease_ttl_ms=2000))
        running = asyncio.ensure_future(follower.run())
        # A page's client, with a page's options, through the page's gate.
        page_client = aioredis.Redis.from_url(
            f"redis://127.0.0.1:{page_gate.port}/0", **client_options()
        )
        try:
            await found_within(lambda: follower.redis_ok and follower.streams.refs)
            await page_client.ping()
            gate.shut()
            page_gate.shut()
            # A page's read that starts as Redis goes away is tried again for up to 2.5 s;
            # the status must not wait for such retries: the follower says so at its first
            # failed read, having tried at most one new connection (its lease's). Counted,
            # not timed: a loaded machine took 3.1 s to run that one failed read.
            page_read = asyncio.ensure_future(page_client.get("anything"))
            tried_when_said: list[int] = []

            def said() -> bool:
                if follower.redis_ok is False and not tried_when_said:
                    tried_when_said.append(gate.tried_while_shut)
                return bool(tried_when_said)

            await found_within(said)
            assert gate.shut_at is not None
            print(
                f"Redis said unreachable {time.monotonic() - gate.shut_at:.2f} s after it went away"
            )
            assert tried_when_said[0] <= 1, f"{tried_when_said[0]} connections tried first"
            with pytest.raises(RedisConnectionError):
                await page_read
            assert page_gate.tried_while_shut > 1  # the page's read was tried again
        finally:
            await cancel_and_wait(running)
            await page_client.aclose()
        # The lease, the follower's other probe, fails at its first try, with one connection.
        tried = gate.tried_while_shut
        with pytest.raises(RedisConnectionError):
            await follower.leadership.renew(follower.probe)
        assert gate.tried_while_shut == tried + 1
        # A page's read, though, is tried again before it fails.
        tried = gate.tried_while_shut
        with pytest.raises(RedisConnectionError):
            await get_client().get("anything")
        assert gate.tried_while_shut > tried + 1
        with contextlib.suppress(Exception):
            await follower.probe.aclose()
