"""This process's part in the deployment: the lease that makes one process the reader of the
event streams, and the exchange of what each process's pages watch (every process publishes
its own; the reader reads them all).

The lease is ``queues.live.lease.Lease`` rather than redis-py's ``Lock``: when Redis refuses writes
at maxmemory the lease is held "unwritten" while nobody else holds one, so that live updates go
on, and its owner token names the process in the interest hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from queues.live import interest
from queues.live.interest import Interest
from queues.live.lease import Lease
from queues.live.status import REDIS_ERRORS, RedisStatus


class Leadership:
    def __init__(
        self,
        registry: Interest,
        lease_key: str,
        interest_key: str,
        lease_ttl_ms: int,
        status: RedisStatus,
    ) -> None:
        self.registry = registry  # what this process's pages watch
        self.lease_key = lease_key
        self.interest_key = interest_key
        self.lease_ttl_ms = lease_ttl_ms
        self.status = status
        self.leader = False
        # When the lease was last confirmed ours (monotonic, taken before asking): it is surely
        # still ours for lease_ttl_ms after that, whatever paused this process meanwhile.
        self.confirmed_at = -math.inf
        self._lease: Lease | None = None

    def _lease_on(self, redis: aioredis.Redis) -> Lease:
        if self._lease is None:
            self._lease = Lease(redis, self.lease_key, self.lease_ttl_ms)
        return self._lease

    async def renew(self, redis: aioredis.Redis) -> bool:
        """Take or keep the lease; True when this process has just become the reader, or
        took the lease again after it had lapsed (another process may have read meanwhile).
        A lease kept through a failed pass (a timeout) is no new reader: its streams and
        counts go on, or a reader of 50,000 queues would start over at every slow answer."""
        lease = self._lease_on(redis)
        asked_at = time.monotonic()
        self.leader = await lease.acquire_or_renew()
        if self.leader:
            self.confirmed_at = asked_at
        if lease.unwritten:
            self.status.refused(
                "lease", "Redis refuses writes; reading while no other reader is known"
            )
        else:
            self.status.accepted("lease")
        return self.leader and not lease.continued

    async def keep_alive(self, redis: aioredis.Redis) -> None:
        """Renew the lease every third of its time while it is ours, beside the passes that
        renew it too: a pass that waits on Redis longer than the lease (following 50,000
        queues at once) must not lose it. Taking it afresh stays the passes' (they start
        again from the streams' ends then); a paused process still loses it."""
        while True:
            await asyncio.sleep(self.lease_ttl_ms / 3000)
            if not self.leader:
                continue
            asked_at = time.monotonic()
            with contextlib.suppress(*REDIS_ERRORS, ResponseError):
                if await self._lease_on(redis).extend():
                    self.confirmed_at = asked_at

    def holds(self) -> bool:
        """The lease is surely this process's now: it was confirmed less than its time to
        live ago (``leader`` alone stays true through a pause longer than that, until the
        next renewal)."""
        return self.leader and time.monotonic() - self.confirmed_at < self.lease_ttl_ms / 1000

    async def publish_interest(self, redis: aioredis.Redis) -> None:
        """What this process's pages watch; refused under maxmemory, when only this
        process's own pages are served (the reader adds them without the exchange)."""
        owner = self._lease_on(redis).owner
        try:
            await interest.publish(redis, self.interest_key, owner, self.registry)
            self.status.accepted("interest")
        except ResponseError as error:
            self.status.refused("interest", error)

    async def read_interest(self, redis: aioredis.Redis) -> interest.Everyone:
        """What the pages of every live process watch."""
        return await interest.read_all(redis, self.interest_key)

    async def release(self) -> None:
        if self._lease is not None:
            with contextlib.suppress(*REDIS_ERRORS):
                await self._lease.release()
