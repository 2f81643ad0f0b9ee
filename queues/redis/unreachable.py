"""The errors that say a Redis cannot be reached (as opposed to a command it refused)."""

from __future__ import annotations

import redis.exceptions

from queues.errors import RedisUnavailable

UNREACHABLE = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
    RedisUnavailable,
)
