"""How long recent jobs ran: processedOn → finishedOn of the newest completed jobs.

Bounded: ``sample`` jobs per queue (default 100), one round trip for the ids and one for their
two timestamps. Jobs removed on completion leave nothing to measure: "where known".
"""

from __future__ import annotations

from queues.reads.keys import QueueRef
from queues.redis import per_connection
from queues.redis.errors import translate_redis_errors

BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


async def recent_durations(refs: list[QueueRef], sample: int = 100) -> dict[QueueRef, list[float]]:
    if not refs or sample <= 0:
        return {}
    async with translate_redis_errors():
        id_lists = await per_connection.execute_for(
            refs, [("ZREVRANGE", ref.key("completed"), 0, sample - 1) for ref in refs]
        )
        plan = [
            (ref, job_id)
            for ref, ids in zip(refs, id_lists, strict=True)
            if isinstance(ids, list)
            for job_id in ids
        ]
        replies = await per_connection.execute_for(
            [ref for ref, _ in plan],
            [("HMGET", ref.job_key(job_id), "processedOn", "finishedOn") for ref, job_id in plan],
        )
    result: dict[QueueRef, list[float]] = {ref: [] for ref in refs}
    for (ref, _), reply in zip(plan, replies, strict=True):
        if not isinstance(reply, list) or None in reply:
            continue
        try:
            seconds = (int(reply[1]) - int(reply[0])) / 1000
        except (TypeError, ValueError):
            continue
        if seconds >= 0:
            result[ref].append(seconds)
    return result
