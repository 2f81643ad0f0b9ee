"""The bullmq package reports refusals as TypeError/Exception text: name them properly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.exceptions

from queues.errors import BullpenError, Conflict, JobNotFound
from queues.redis.errors import translate_redis_errors


@asynccontextmanager
async def translate_bullmq_errors(job_id: str | None = None) -> AsyncIterator[None]:
    async with translate_redis_errors():
        try:
            yield
        except (BullpenError, redis.exceptions.RedisError):
            raise
        except Exception as error:  # bullmq raises bare TypeError/Exception with a message
            text = str(error)
            if "Missing key for job" in text:
                raise JobNotFound(f"No job {job_id!r}") from error
            raise Conflict(text.split(". ")[0] if text else type(error).__name__) from error
