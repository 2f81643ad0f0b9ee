"""Logging filters for the sites that run Bullpen.

channels-redis's pub/sub layer logs a full traceback every second while its Redis is away; one
line a minute says the same. Use it on the ``channels_redis.*`` loggers (the standalone site does).
"""

from __future__ import annotations

import logging
import time


class OncePerInterval(logging.Filter):
    """Let a given message through at most once per ``seconds``."""

    def __init__(self, seconds: float = 60.0) -> None:
        super().__init__()
        self.seconds = seconds
        self._last: dict[tuple[str, str], float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        if now - self._last.get(key, -self.seconds) < self.seconds:
            return False
        self._last[key] = now
        return True
