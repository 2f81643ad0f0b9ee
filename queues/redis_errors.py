"""Turning redis-py's failures into :class:`RedisUnavailable` with a message a person can act on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.exceptions

from queues.errors import RedisUnavailable


@asynccontextmanager
async def translate_redis_errors() -> AsyncIterator[None]:
    try:
        yield
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
        raise RedisUnavailable(f"Redis is unreachable: {exc}") from exc
    except redis.exceptions.ResponseError as exc:
        raise RedisUnavailable(f"Redis answered with an error: {exc}") from exc
