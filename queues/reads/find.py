"""Finding a job by id in any queue: one pipelined EXISTS per queue, one round trip."""

from __future__ import annotations

from queues.reads.discovery import discovered
from queues.reads.keys import QueueRef
from queues.redis import per_connection
from queues.redis.errors import translate_redis_errors

# Keys of a queue that are not jobs, though they sit where a job with that id would.
RESERVED = {
    "meta",
    "id",
    "wait",
    "active",
    "paused",
    "completed",
    "failed",
    "delayed",
    "prioritized",
    "waiting-children",
    "events",
    "stalled",
    "stalled-check",
    "limiter",
    "marker",
    "pc",
    "repeat",
    "de",
    "metrics",
}


async def find_job(job_id: str, refs: list[QueueRef] | None = None) -> list[QueueRef]:
    """The queues holding a job with this id (ids are per queue: there may be several)."""
    job_id = job_id.strip()
    if not job_id or len(job_id) > 1000 or job_id in RESERVED:
        return []
    async with translate_redis_errors():
        targets = refs if refs is not None else list((await discovered()).queues)
        replies = await per_connection.execute_for(
            targets, [("TYPE", ref.job_key(job_id)) for ref in targets]
        )
    return [ref for ref, reply in zip(targets, replies, strict=True) if reply == "hash"]
