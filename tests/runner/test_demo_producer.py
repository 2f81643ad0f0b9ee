"""The demo's producer through Redis going away and coming back: it waits and goes on adding
jobs (``./run demo`` stops everything when one of its parts ends)."""

from __future__ import annotations

import asyncio
from typing import Any

from redis.exceptions import RedisError

from bullpen_site import demo_jobs
from queues.cancelling import cancel_and_wait
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import wait_for


def jobs_added(server: RedisServer) -> int:
    try:
        with server.client() as client:
            return sum(int(client.get(f"bull:{q}:id") or 0) for q in demo_jobs.DEMO_QUEUES)
    except (RedisError, OSError):  # the server is restarting
        return 0


async def test_the_demo_producer_waits_for_redis_and_goes_on_adding_jobs(
    redis_server: RedisServer, bullpen_settings: dict[str, Any], monkeypatch: Any
) -> None:
    monkeypatch.setattr(demo_jobs, "AWAY_RETRY_S", 0.1)
    producer = asyncio.ensure_future(demo_jobs.run_demo(rate_per_second=20, per_queue=1))
    try:
        await wait_for("jobs past the seed", lambda: _more_than(redis_server, 8), limit_s=30)
        redis_server.stop()
        # Longer than a command's own retries (2.5 s): the producer's add fails, more than once.
        await asyncio.sleep(4.0)
        assert not producer.done()
        redis_server.start()  # empty: no persistence
        await wait_for("jobs added again", lambda: _more_than(redis_server, 3), limit_s=30)
        assert not producer.done()
    finally:
        await cancel_and_wait(producer)
        if redis_server.process is None:
            redis_server.start()


async def _more_than(server: RedisServer, count: int) -> bool:
    return jobs_added(server) > count
