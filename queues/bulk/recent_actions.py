"""The newest bulk actions of every connection, as one list: each connection keeps its own."""

from __future__ import annotations

import asyncio

from queues.bulk.record import ActionRecord
from queues.bulk.store import store_for
from queues.errors import RedisUnavailable
from queues.redis import connections, reachability
from queues.redis.errors import reason, translate_redis_errors


async def recent_everywhere(limit: int) -> list[ActionRecord]:
    """The ``limit`` newest actions over every connection, newest first. A connection that
    cannot be reached is left out while another answers (as the overview leaves it out)."""
    names = connections.redis_names()  # bulk actions are recorded on Redis
    if not names:
        return []  # PostgreSQL stores alone: their sweeps run at once, unrecorded
    if len(names) == 1:
        async with translate_redis_errors():
            return await store_for(names[0]).recent(limit)
    answers = await asyncio.gather(*(_recent_of(name, limit) for name in names))
    found = [records for records in answers if not isinstance(records, BaseException)]
    if not found:
        raise next(error for error in answers if isinstance(error, BaseException))
    merged = [record for records in found for record in records]
    merged.sort(key=lambda record: (record.created_ms, record.id), reverse=True)
    return merged[:limit]


async def _recent_of(name: str, limit: int) -> list[ActionRecord] | BaseException:
    if reachability.skip(name):
        return RedisUnavailable(f"Redis connection {name!r} is unreachable")
    try:
        async with translate_redis_errors():
            records = await store_for(name).recent(limit)
    except RedisUnavailable as error:
        reachability.note_down(name, reason(error.__cause__ or error))
        return error
    return records
