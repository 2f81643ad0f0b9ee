"""Actions on one job, through bullmq's scripts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bullmq import Job

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.job_copies import kept_opts
from queues.actions.result import ActionResult
from queues.errors import BadParameter, BullpenError, Conflict, JobNotFound, OutcomeUnknown
from queues.reads.keys import QueueRef

RETRYABLE = ("failed", "completed")


async def _load(ref: QueueRef, job_id: str) -> tuple[Job, str]:
    queue = queue_for_actions(ref)
    job = await Job.fromId(queue, job_id)
    if job is None:
        raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
    state = await queue.getJobState(job_id)
    return job, str(state)


def attempts_allowed(job: Job) -> int | None:
    """The attempts a job's options allow, or None when it has no limit beyond one."""
    allowed = job.opts.get("attempts") if isinstance(job.opts, dict) else None
    if isinstance(allowed, int) and not isinstance(allowed, bool) and allowed > 0:
        return allowed
    return None


async def retry_job(ref: QueueRef, job_id: str, *, reset_attempts: bool = False) -> ActionResult:
    """Move a failed or completed job back to wait. A job that used all its attempts gets one
    more unless ``reset_attempts``: then BullMQ counts its attempts from zero again."""
    async with translate_bullmq_errors(job_id):
        job, state = await _load(ref, job_id)
        if state not in RETRYABLE:
            raise Conflict(
                f"Job {job_id!r} is {state}; only failed or completed jobs can be retried"
            )
        made = int(job.attemptsMade or 0)
        allowed = attempts_allowed(job)
        fresh = {"resetAttemptsMade": True, "resetAttemptsStarted": True}
        await job.retry(state, fresh if reset_attempts else {})
    detail: dict[str, Any] = {"from": state, "attemptsMade": made, "attempts": allowed}
    if reset_attempts:
        detail["resetAttempts"] = True
    elif allowed is not None and made >= allowed:
        # Its next failure is final: BullMQ fails a job once attemptsMade reaches attempts.
        detail["exhausted"] = True
    return ActionResult("retry", ref.slug, [job_id], 1, detail)


async def remove_job(ref: QueueRef, job_id: str) -> ActionResult:
    async with translate_bullmq_errors(job_id):
        _, state = await _load(ref, job_id)
        if state == "active":
            raise Conflict(f"Job {job_id!r} is active: a worker holds it; it cannot be removed")
        removed = await queue_for_actions(ref).remove(job_id)
        if not removed:
            raise Conflict(f"Job {job_id!r} is locked by a worker and was not removed")
    return ActionResult("remove", ref.slug, [job_id], 1, {"from": state})


async def promote_job(ref: QueueRef, job_id: str) -> ActionResult:
    async with translate_bullmq_errors(job_id):
        job, state = await _load(ref, job_id)
        if state != "delayed":
            raise Conflict(f"Job {job_id!r} is {state}; only delayed jobs can be promoted")
        await job.promote()
    return ActionResult("promote", ref.slug, [job_id], 1)


async def update_job_data(ref: QueueRef, job_id: str, data: Any) -> ActionResult:
    async with translate_bullmq_errors(job_id):
        job, state = await _load(ref, job_id)
        if state == "active":
            raise Conflict(f"Job {job_id!r} is active; change its data when no worker holds it")
        await job.updateData(data)
    return ActionResult("update-data", ref.slug, [job_id], 1)


async def duplicate_job(ref: QueueRef, job_id: str) -> ActionResult:
    async with translate_bullmq_errors(job_id):
        job, _ = await _load(ref, job_id)
        opts = kept_opts(job.opts, with_delay=True)
        copy = await queue_for_actions(ref).add(job.name, job.data, opts)
    return ActionResult("duplicate", ref.slug, [job_id], 1, {"newJobId": str(copy.id)})


async def change_priority(ref: QueueRef, job_id: str, priority: int) -> ActionResult:
    if not 0 <= priority <= 2_097_152:
        raise BadParameter("priority must be between 0 (none) and 2097152")
    async with translate_bullmq_errors(job_id):
        job, state = await _load(ref, job_id)
        if state not in ("waiting", "prioritized", "delayed", "paused"):
            raise Conflict(f"Job {job_id!r} is {state}; only waiting jobs can change priority")
        await job.changePriority({"priority": priority})
    return ActionResult("priority", ref.slug, [job_id], 1, {"priority": priority})


async def each_job(
    ref: QueueRef, job_ids: list[str], action: str, act: Callable[[QueueRef, str], Awaitable[Any]]
) -> ActionResult:
    """``act`` on every job; one job refused (gone, active...) does not stop the others."""
    outcome: dict[str, str] = {}
    for job_id in job_ids:
        try:
            await act(ref, job_id)
            outcome[job_id] = "ok"
        except OutcomeUnknown as error:
            outcome[job_id] = error.describe(action, job_id)
        except BullpenError as error:
            outcome[job_id] = str(error)
    done = [job_id for job_id, text in outcome.items() if text == "ok"]
    refused = {job_id: text for job_id, text in outcome.items() if text != "ok"}
    # "results": why jobs were refused (the first 50: one bad id among thousands must not
    # bloat the answer or the audit row); the done ones are the result's job ids.
    return ActionResult(
        action, ref.slug, done, len(done), {"results": dict(list(refused.items())[:50])}
    )
