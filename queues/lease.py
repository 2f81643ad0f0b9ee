"""One reader of the event streams per deployment: a lease in Redis, renewed by its holder.

Every server process runs a follower; only the one holding the lease reads Redis for live
updates. If it dies, the lease expires and another process takes it within ``ttl`` seconds.
"""

from __future__ import annotations

import os
import socket
import uuid

import redis.asyncio as aioredis

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
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    async def acquire_or_renew(self) -> bool:
        """True while we hold the lease; call it at least every ttl/3."""
        if self.held:
            self.held = bool(await self._renew(keys=[self.key], args=[self.owner, self.ttl_ms]))
        if not self.held:
            self.held = bool(await self.redis.set(self.key, self.owner, nx=True, px=self.ttl_ms))
        return self.held

    async def release(self) -> None:
        if self.held:
            self.held = False
            await self._release(keys=[self.key], args=[self.owner])
