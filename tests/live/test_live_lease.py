"""The live lease against a real Redis: a lease kept is told from one taken again after it
lapsed (another process may have read the streams meanwhile), and a holder knows how long its
lease is surely its own."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from queues.live.interest import Interest
from queues.live.leadership import Leadership
from queues.live.lease import Lease
from queues.live.status import RedisStatus
from queues.redis.clients import get_client

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
