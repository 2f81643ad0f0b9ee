"""Drop the dead letters whose original job has completed since (it was replayed, or retried in
its own queue): they no longer say that anything is dead.

Dead letters wait in the dead-letter queue (no worker takes them). They are read a chunk at a
time, each with its original's state (queues/reads/listing.py, queues/reads/dead_letters.py), and
those
whose original is completed are removed through bullmq's remove script, one by one: a dead
letter taken or changed meanwhile is left as bullmq leaves it.
"""

from __future__ import annotations

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.reads.keys import QueueRef
from queues.reads.listing import fetch_jobs
from queues.redis import fastpipe
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

_CHUNK = 500
# At most this many dead letters are looked at by one action (the newest first).
MAX_CHECKED = 50_000
# Where dead letters wait: the wait list, or the paused list of a paused dead-letter queue.
_WAITING = ("wait", "paused")


async def drop_completed_dead_letters(dead_letters: QueueRef) -> ActionResult:
    """Remove every dead letter of ``dead_letters`` (the dead-letter queue) whose original job
    is completed; the result names the removed dead letters and how many were looked at."""
    redis = get_client(dead_letters.connection)
    async with translate_redis_errors():
        lists = await fastpipe.execute(
            redis, [("LRANGE", dead_letters.key(suffix), 0, MAX_CHECKED - 1) for suffix in _WAITING]
        )
    ids = [str(job_id) for found in lists if isinstance(found, list) for job_id in found]
    ids = ids[:MAX_CHECKED]
    dropped: list[str] = []
    queue = queue_for_actions(dead_letters)
    for start in range(0, len(ids), _CHUNK):
        async with translate_redis_errors():
            # Capped: the envelope's queue and job id come first, before the original's data.
            # Rows of the dead-letter queue carry their original's state.
            rows = await fetch_jobs(dead_letters, ids[start : start + _CHUNK], 1024)
        for row in rows:
            if row.get("originalState") != "completed":
                continue
            async with translate_bullmq_errors(str(row["id"])):
                if await queue.remove(str(row["id"])):
                    dropped.append(str(row["id"]))
    return ActionResult(
        "drop-completed-dead-letters",
        dead_letters.slug,
        dropped,
        len(dropped),
        {"checked": len(ids)},
    )
