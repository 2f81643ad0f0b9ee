"""Rescheduling a delayed job: a new due time, counted from now (BullMQ's changeDelay)."""

from __future__ import annotations

import time

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.actions.shipped_scripts import shipped_script
from queues.errors import Conflict, JobNotFound
from queues.reads.keys import QueueRef

# The script's answers besides 0 (done).
_MISSING_JOB = -1
_NOT_DELAYED = -3


async def reschedule_job(ref: QueueRef, job_id: str, delay_ms: int) -> ActionResult:
    """The delayed job ``job_id`` becomes due ``delay_ms`` from now. Raises JobNotFound, or
    Conflict when the job is not delayed (a waiting or finished job has no due time)."""
    queue = queue_for_actions(ref)
    async with translate_bullmq_errors(job_id):
        state = str(await queue.getJobState(job_id))
        if state == "unknown":
            raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
        if state != "delayed":
            raise Conflict(f"Job {job_id!r} is {state}; only delayed jobs can be rescheduled")
        now = int(time.time() * 1000)
        keys = [queue.keys[name] for name in ("delayed", "meta", "marker", "events")]
        change = shipped_script(queue.client, "changeDelay-4.lua")
        answer = await change(keys=keys, args=[delay_ms, now, job_id, queue.toKey(job_id)])
    if answer == _MISSING_JOB:
        raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
    if answer == _NOT_DELAYED:
        raise Conflict(f"Job {job_id!r} is no longer delayed; it was not rescheduled")
    return ActionResult(
        "reschedule", ref.slug, [job_id], 1, {"delayMs": delay_ms, "dueAt": now + delay_ms}
    )
