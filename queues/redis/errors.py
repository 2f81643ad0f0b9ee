"""Turning redis-py's failures into :class:`RedisUnavailable` with a message a person can act on.

Every message says why: some failures carry no text of their own (a bare ``TimeoutError``),
and "Redis is unreachable: " with nothing after it helps nobody.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.exceptions

from queues.errors import OutcomeUnknown, RedisFull, RedisUnavailable
from queues.redis.write_once import WriteOutcomeUnknown


def reason(error: BaseException) -> str:
    """What went wrong, never empty."""
    text = str(error).strip()
    if text:
        return text
    if isinstance(error, TimeoutError | redis.exceptions.TimeoutError):
        return "no answer in time"
    if isinstance(error, redis.exceptions.ConnectionError | ConnectionError):
        return "the connection was closed"
    return type(error).__name__


@asynccontextmanager
async def translate_redis_errors() -> AsyncIterator[None]:
    try:
        yield
    except WriteOutcomeUnknown as exc:
        raise OutcomeUnknown(reason(exc)) from exc
    except redis.exceptions.OutOfMemoryError as exc:
        raise RedisFull from exc
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
        raise RedisUnavailable(f"Redis is unreachable: {reason(exc)}") from exc
    except redis.exceptions.ResponseError as exc:
        raise RedisUnavailable(f"Redis answered with an error: {reason(exc)}") from exc
