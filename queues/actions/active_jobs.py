"""Taking an active job from its worker: to failed, or back to wait for the workers.

Meant for stuck jobs (active, their lock gone: the worker died and no stalled check ran), and
allowed for any active job. Both go through BullMQ's own scripts with the token ``"0"``, the way
BullMQ acts on a job without holding its lock: moveToFinished (as ``job.moveToFailed`` does,
but final: no retry, whatever attempts are left) and moveJobFromActiveToWait (as
``job.moveToWait``). A worker still running such a job is told by BullMQ, when it tries to
finish it, that its lock is gone, and its result is dropped.
"""

from __future__ import annotations

from typing import Any

from bullmq import Job

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.actions.shipped_scripts import shipped_script
from queues.errors import Conflict, JobNotFound
from queues.reads.keys import QueueRef
from queues.reads.stuck import lock_key

# What a job moved to failed without a reason says it failed of.
DEFAULT_REASON = "Moved to failed from the dashboard"
# BullMQ's token for "act without holding the lock".
_NO_LOCK = "0"


async def _active_job(ref: QueueRef, job_id: str) -> tuple[Job, bool]:
    """The job, and whether a worker still holds it (its lock exists). Raises JobNotFound, or
    Conflict naming its state when it is not active."""
    queue = queue_for_actions(ref)
    job = await Job.fromId(queue, job_id)
    if job is None:
        raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
    state = str(await queue.getJobState(job_id))
    if state != "active":
        raise Conflict(f"Job {job_id!r} is {state}; only active jobs can be moved")
    locked = bool(await queue.client.exists(lock_key(ref, job_id)))
    return job, locked


async def move_to_failed(ref: QueueRef, job_id: str, reason: str = "") -> ActionResult:
    """Fail an active job for good with ``reason`` (DEFAULT_REASON when empty); its stack
    traces are kept as they were."""
    text = reason.strip() or DEFAULT_REASON
    async with translate_bullmq_errors(job_id):
        job, locked = await _active_job(ref, job_id)
        remove_on_fail = (
            job.opts.get("removeOnFail", False) if isinstance(job.opts, dict) else False
        )
        await job.backend.moveToFailed(
            job, text, remove_on_fail, _NO_LOCK, False, {"failedReason": text}
        )
    detail: dict[str, Any] = {"reason": text, "stuck": not locked}
    return ActionResult("move-to-failed", ref.slug, [job_id], 1, detail)


async def move_to_wait(ref: QueueRef, job_id: str) -> ActionResult:
    """Give an active job back to the workers: to the end of wait (or prioritized by its
    priority), as BullMQ's job.moveToWait does."""
    async with translate_bullmq_errors(job_id):
        _, locked = await _active_job(ref, job_id)
        queue = queue_for_actions(ref)
        keys = queue.keys
        move = shipped_script(queue.client, "moveJobFromActiveToWait-9.lua")
        code = await move(
            keys=[
                keys["active"],
                keys["wait"],
                keys["stalled"],
                keys["paused"],
                keys["meta"],
                keys["limiter"],
                keys["prioritized"],
                keys["marker"],
                keys["events"],
            ],
            args=[job_id, _NO_LOCK, queue.toKey(job_id)],
        )
        if isinstance(code, int) and code < 0:
            raise Conflict(f"Job {job_id!r} could not be moved to wait (BullMQ code {code})")
    return ActionResult("move-to-wait", ref.slug, [job_id], 1, {"stuck": not locked})
