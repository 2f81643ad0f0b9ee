"""Whether Redis answers, and the writes it refuses: each said once, not on every pass."""

from __future__ import annotations

import logging

from queues.redis.unreachable import UNREACHABLE

log = logging.getLogger("bullpen.live")

# Errors that mean Redis is away (as opposed to a command it refused).
REDIS_ERRORS = UNREACHABLE


class RedisStatus:
    def __init__(self) -> None:
        self.ok: bool | None = None  # None until the first pass
        self._refusals: set[str] = set()  # writes Redis refused, reported once each

    def change(self, ok: bool, detail: str = "") -> bool:
        """Note whether Redis answers; True when that is news for the pages."""
        if self.ok is ok:
            return False
        self.ok = ok
        if not ok:
            log.warning("live updates: Redis unreachable: %s", detail)
        return True

    def refused(self, what: str, error: object) -> None:
        """Redis refused a write (e.g. maxmemory): said once, not on every pass."""
        if what not in self._refusals:
            self._refusals.add(what)
            log.warning("live updates: Redis refused the %s write: %s", what, error)

    def accepted(self, what: str) -> None:
        if what in self._refusals:
            self._refusals.discard(what)
            log.info("live updates: Redis takes the %s write again", what)
