"""The live lease against a real Redis: a lease kept is told from one taken again after it
lapsed (another process may have read the streams meanwhile), and a holder knows how long its
lease is surely its own."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import redis.asyncio as aioredis

from queues.live.interest import Interest
from queues.live.leadership import Leadership
from queues.live.lease import Lease
from queues.live.status import RedisStatus
from queues.redis.clients import get_client
from tests.support.servers.redis_server import RedisServer

# Long enough that a test process paused on a loaded machine still renews in time; short enough
# that waiting for a lapse costs a second.
TTL_MS = 1000


async def lapse(redis_client: Any, key: str) -> None:
    """Until the lease's time to live has run out (Redis dropped the key)."""
    deadline = time.monotonic() + 5
    while redis_client.exists(key):
        assert time.monotonic() < deadline, "the lease never lapsed"
        await asyncio.sleep(0.02)


async def test_a_lease_taken_again_after_it_lapsed_is_continued_only_if_nobody_held_it(
    redis_client: Any,
) -> None:
    lease = Lease(get_client(), "bullpen:test:lease", ttl_ms=TTL_MS)
    assert await lease.acquire_or_renew()
    assert not lease.continued  # taken, not kept
    assert await lease.acquire_or_renew()
    assert lease.continued  # renewed in time
    await lapse(redis_client, lease.key)
    assert await lease.acquire_or_renew()  # nobody else took it: what it read still stands
    assert lease.continued
    await lapse(redis_client, lease.key)
    other = Lease(get_client(), lease.key, ttl_ms=TTL_MS)
    assert await other.acquire_or_renew()  # another process held it meanwhile
    await other.release()
    assert await lease.acquire_or_renew()
    assert not lease.continued
    await lease.release()


async def test_a_holder_knows_its_lease_only_for_its_time_to_live(redis_client: Any) -> None:
    key = "bullpen:test:leadership"
    leadership = Leadership(Interest(), key, "bullpen:test:interest", TTL_MS, RedisStatus())
    assert await leadership.renew(get_client())  # just became the reader
    assert leadership.holds()
    assert not await leadership.renew(get_client())  # kept: nothing new
    # Paused past its time to live without renewing: it still thinks itself the reader, but
    # no longer surely holds the lease. Taken back with nobody in between, it goes on as the
    # reader; taken back after another process held it, it becomes the reader afresh.
    await lapse(redis_client, key)
    assert leadership.leader and not leadership.holds()
    assert not await leadership.renew(get_client())
    assert leadership.holds()
    await lapse(redis_client, key)
    other = Lease(get_client(), key, ttl_ms=TTL_MS)
    assert await other.acquire_or_renew()
    await other.release()
    assert await leadership.renew(get_client())
    assert leadership.holds()
    await leadership.release()


class RepliesHeld:
    """A TCP proxy to Redis that can hold Redis's replies back while the commands still reach
    it: its client then waits on a command Redis already ran."""

    def __init__(self, redis_port: int) -> None:
        self.redis_port = redis_port
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self.flowing.set()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.redis_port)
        await asyncio.gather(
            self._pump(reader, up_writer, held=False),
            self._pump(up_reader, writer, held=True),
            return_exceptions=True,
        )

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, held: bool
    ) -> None:
        try:
            while data := await reader.read(65536):
                if held:
                    await self.flowing.wait()
                writer.write(data)
                await writer.drain()
        finally:
            writer.transport.abort()


async def test_a_take_cut_off_after_redis_ran_it_is_still_given_back(
    redis_server: RedisServer, redis_client: Any
) -> None:
    # A stop that cancels the take while its answer is on the way: Redis wrote the lease in
    # this process's name. Not given back, it would bar every other process for its time.
    proxy = RepliesHeld(redis_server.port)
    await proxy.start()
    client = aioredis.Redis.from_url(f"redis://127.0.0.1:{proxy.port}/0", decode_responses=True)
    try:
        lease = Lease(client, "bullpen:test:lease", ttl_ms=60_000)
        await client.ping()  # connected first: a new connection's own handshake waits on replies
        proxy.flowing.clear()
        taking = asyncio.ensure_future(lease.acquire_or_renew())
        deadline = time.monotonic() + 10
        while redis_client.get(lease.key) != lease.owner:
            assert time.monotonic() < deadline, "the take never reached Redis"
            await asyncio.sleep(0.01)
        taking.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await taking
        assert not lease.held
        proxy.flowing.set()
        await lease.release()
        assert redis_client.get(lease.key) is None
    finally:
        await client.aclose()
        await proxy.close()
