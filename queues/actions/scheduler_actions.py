"""Creating, updating and running job schedulers, through bullmq's own methods.

``upsert_scheduler`` is BullMQ's ``upsertJobScheduler``: the scheduler's hash and its place in
the ``repeat`` set are written, and its next job is added (delayed until due) by the same
script Node runs. ``run_scheduler_now`` leaves the schedule alone: it adds one ordinary job
made from the scheduler's template (its name, data and options) with an id of BullMQ's own
choosing; that job carries no ``repeatJobKey``, so finishing it never moves the schedule,
and the scheduler's next run stays when it was.
"""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.job_copies import kept_opts
from queues.actions.result import ActionResult
from queues.errors import BadParameter, Conflict
from queues.reads.keys import QueueRef


async def upsert_scheduler(
    ref: QueueRef,
    scheduler_id: str,
    repeat: dict[str, Any],
    name: str,
    data: Any,
    opts: dict[str, Any],
) -> ActionResult:
    """Create the scheduler, or replace its settings and template. ``nextJobId`` is the
    delayed job of its next run (None when its limit or end date leaves none)."""
    queue = queue_for_actions(ref)
    existed = bool(await queue.isJobScheduler(scheduler_id))
    try:
        async with translate_bullmq_errors():
            job = await queue.upsertJobScheduler(scheduler_id, repeat, name, data, opts)
    except Conflict as error:
        # bullmq says what it refuses in a ValueError (both every and pattern, ...).
        if isinstance(error.__cause__, ValueError | CroniterBadCronError | CroniterBadDateError):
            raise BadParameter(str(error.__cause__)) from error
        if isinstance(error.__cause__, ZoneInfoNotFoundError):
            raise BadParameter(f"Unknown time zone {repeat.get('tz')!r}") from error
        raise
    detail = {
        "scheduler": scheduler_id,
        "created": not existed,
        "nextJobId": str(job.id) if job is not None else None,
        "repeat": repeat,
    }
    return ActionResult("upsert-scheduler", ref.slug, [str(job.id)] if job else [], 1, detail)


async def run_scheduler_now(ref: QueueRef, scheduler_id: str) -> ActionResult:
    """One job now from the scheduler's template; the schedule itself is left as it was."""
    queue = queue_for_actions(ref)
    async with translate_bullmq_errors():
        # bullmq's getJobScheduler fails on an unknown id rather than answering None.
        known = await queue.isJobScheduler(scheduler_id)
        scheduler = await queue.getJobScheduler(scheduler_id) if known else None
        if not scheduler:
            raise Conflict(f"No job scheduler {scheduler_id!r} in queue {ref.slug!r}")
        template = scheduler.get("template") or {}
        data = template.get("data", {})
        opts = kept_opts(template.get("opts"))
        job = await queue.add(str(scheduler.get("name") or scheduler_id), data, opts)
    return ActionResult(
        "run-scheduler",
        ref.slug,
        [str(job.id)],
        1,
        {"scheduler": scheduler_id, "next": scheduler.get("next")},
    )
