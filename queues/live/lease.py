"""One reader of the event streams per deployment: a lease in Redis, renewed by its holder.

Every server process runs a follower; only the one holding the lease reads Redis for live
updates. If it dies, the lease expires and another process takes it within ``ttl`` seconds.

Every take is counted (``<key>:takes``): a holder whose lease lapsed (its process paused, a
loaded machine) and who takes it back with the next count knows nobody held it in between, so
what it read and sent still stands.
"""

from __future__ import annotations

import os
import socket
import uuid

import redis.asyncio as aioredis
import redis.exceptions

# Renew or release only a lease we still hold (compare-and-set on the owner token).
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Lease:
    def __init__(self, redis: aioredis.Redis, key: str, ttl_ms: int = 5000) -> None:
        self.redis = redis
        self.key = key
        self.ttl_ms = ttl_ms
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.held = False
        # Redis refuses writes (maxmemory): held without a written lease while nobody else
        # holds one, so that live updates go on; several readers at worst send twice.
        self.unwritten = False
        # The last call kept the lease it already held, or took it back after it lapsed with
        # nobody else taking it in between; False when another process may have held it.
        self.continued = False
        self.takes_key = f"{key}:takes"
        self.took: int | None = None  # the count of takes when this process last took it
        # A take was sent and its outcome not yet seen: a cancel or a broken connection after
        # Redis ran it leaves a lease written in our name that ``held`` knows nothing of.
        self.maybe_taken = False
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    async def acquire_or_renew(self) -> bool:
        """True while we hold the lease; call it at least every ttl/3."""
        was_held, lapsed, alone = self.held, False, False
        try:
            if self.held and not self.unwritten:
                renewed = await self._renew(keys=[self.key], args=[self.owner, self.ttl_ms])
                self.held = bool(renewed)
                lapsed = not renewed
            if not self.held or self.unwritten:
                self.maybe_taken = True
                taken = await self.redis.set(self.key, self.owner, nx=True, px=self.ttl_ms)
                if taken:
                    alone = await self._count_take()
                self.held = bool(taken) or (self.unwritten and await self._mine_or_free())
                self.maybe_taken = False
            self.unwritten = False
        except redis.exceptions.OutOfMemoryError:
            self.unwritten = True
            self.held = await self._mine_or_free()
        self.continued = was_held and self.held and (not lapsed or alone)
        return self.held

    async def _count_take(self) -> bool:
        """Count this take; True when it directly follows this process's own last take."""
        count = int(await self.redis.incr(self.takes_key))
        # Kept a day past the last take: a count that started over only costs a fresh start.
        await self.redis.pexpire(self.takes_key, 86_400_000)
        alone = self.took is not None and count == self.took + 1
        self.took = count
        return alone

    async def extend(self) -> bool:
        """Renew the lease while it is still ours, without taking it afresh: True when renewed."""
        if not self.held or self.unwritten:
            return False
        return bool(await self._renew(keys=[self.key], args=[self.owner, self.ttl_ms]))

    async def _mine_or_free(self) -> bool:
        holder = await self.redis.get(self.key)
        return holder is None or holder == self.owner

    async def release(self) -> None:
        """Give the lease back if it may be ours (compare-and-delete: another holder's stays)."""
        if self.held or self.maybe_taken:
            self.held = self.maybe_taken = False
            await self._release(keys=[self.key], args=[self.owner])
