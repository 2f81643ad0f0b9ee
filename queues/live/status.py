"""Whether Redis answers, and the writes it refuses: each said once, not on every pass."""

from __future__ import annotations

import contextlib
import logging

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from queues.redis.cluster import is_cluster
from queues.redis.unreachable import UNREACHABLE

log = logging.getLogger("bullpen.live")

# Errors that mean Redis is away (as opposed to a command it refused).
REDIS_ERRORS = UNREACHABLE


class RedisStatus:
    def __init__(self) -> None:
        self.ok: bool | None = None  # None until the first pass
        self._refusals: set[str] = set()  # writes Redis refused, reported once each
        self._server_id = ""  # the run id of the Redis server last seen answering

    def change(self, ok: bool, detail: str = "") -> bool:
        """Note whether Redis answers; True when that is news for the pages."""
        if self.ok is ok:
            return False
        self.ok = ok
        if not ok:
            log.warning("live updates: Redis unreachable: %s", detail)
        return True

    async def same_server(self, client: aioredis.Redis) -> bool:
        """Whether the Redis server answering on ``client`` is the one seen before (its run
        id, one ``INFO``): not after a restart or a failover, nor when it cannot be told (a
        Redis Cluster, a user refused ``INFO``, the first time)."""
        known, self._server_id = self._server_id, ""
        with contextlib.suppress(ResponseError):
            if not is_cluster(client):
                self._server_id = str((await client.info("server")).get("run_id") or "")
        return bool(known) and known == self._server_id

    def refused(self, what: str, error: object) -> None:
        """Redis refused a write (e.g. maxmemory): said once, not on every pass."""
        if what not in self._refusals:
            self._refusals.add(what)
            log.warning("live updates: Redis refused the %s write: %s", what, error)

    def accepted(self, what: str) -> None:
        if what in self._refusals:
            self._refusals.discard(what)
            log.info("live updates: Redis takes the %s write again", what)
