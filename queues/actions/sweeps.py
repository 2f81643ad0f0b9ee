"""Sweeps of a whole state done at once through bullmq's own functions: retry-all, promote-all
and clean, for a store whose SQL moves a batch in one transaction (BullMQ 6 on PostgreSQL).
On Redis they run as bulk actions instead (queues/bulk/), batch by batch with progress."""

from __future__ import annotations

import time

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.bulk.set_kinds import CLEANABLE
from queues.errors import BadParameter
from queues.reads.keys import QueueRef

# Jobs one call of BullMQ's function moves; it is called again until it moves none.
BATCH = 1000


async def retry_all(ref: QueueRef, state: str) -> ActionResult:
    if state not in ("failed", "completed"):
        raise BadParameter("state must be 'failed' or 'completed'")
    backend = queue_for_actions(ref).backend
    # Jobs that finish while the sweep runs are not taken: they finished after it was asked.
    asked_ms = int(time.time() * 1000)
    moved = 0
    async with translate_bullmq_errors():
        while batch := int(await backend.retryJobs(state, BATCH, asked_ms) or 0):
            moved += batch
    return ActionResult("retry-all", ref.slug, count=moved, detail={"state": state})


async def promote_all(ref: QueueRef) -> ActionResult:
    backend = queue_for_actions(ref).backend
    moved = 0
    async with translate_bullmq_errors():
        while batch := int(await backend.promoteJobs(BATCH) or 0):
            moved += batch
    return ActionResult("promote-all", ref.slug, count=moved)


async def clean(ref: QueueRef, state: str, grace_ms: int, limit: int) -> ActionResult:
    if state not in CLEANABLE:
        raise BadParameter(f"state must be one of: {', '.join(CLEANABLE)}")
    if grace_ms < 0 or limit < 0:
        raise BadParameter("grace_ms and limit must be 0 or more")
    async with translate_bullmq_errors():
        removed = await queue_for_actions(ref).clean(grace_ms, limit, state)
    detail = {"state": state, "grace_ms": grace_ms, "limit": limit}
    return ActionResult(
        "clean", ref.slug, [str(job_id) for job_id in removed], len(removed), detail
    )
