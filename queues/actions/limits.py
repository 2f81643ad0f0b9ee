"""A queue's global concurrency and rate limit, which every worker of the queue (Node or
Python) reads from the queue's meta hash when it takes a job; and lifting a rate limit now in
force. All through the bullmq package's Queue methods, the same operations as Node's.
"""

from __future__ import annotations

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.reads.keys import QueueRef


async def set_concurrency(ref: QueueRef, concurrency: int | None) -> ActionResult:
    """At most ``concurrency`` jobs active at once across all workers; None removes the cap."""
    queue = queue_for_actions(ref)
    async with translate_bullmq_errors():
        # Read first, for the audit log: what the change replaced.
        previous = await queue.getGlobalConcurrency()
        if concurrency is None:
            await queue.removeGlobalConcurrency()
        else:
            await queue.setGlobalConcurrency(concurrency)
    detail = {"concurrency": concurrency, "previous": previous}
    return ActionResult("concurrency", ref.slug, detail=detail)


async def set_rate_limit(
    ref: QueueRef, max_jobs: int | None, duration_ms: int | None
) -> ActionResult:
    """At most ``max_jobs`` jobs started per ``duration_ms`` across all workers; None for both
    removes the limit (a worker's own limiter, if it has one, applies again)."""
    queue = queue_for_actions(ref)
    async with translate_bullmq_errors():
        previous = await queue.getGlobalRateLimit()
        if max_jobs is None or duration_ms is None:
            await queue.removeGlobalRateLimit()
            limit = None
        else:
            await queue.setGlobalRateLimit(max_jobs, duration_ms)
            limit = {"max": max_jobs, "duration": duration_ms}
    return ActionResult("rate-limit", ref.slug, detail={"rateLimit": limit, "previous": previous})


async def release_rate_limit(ref: QueueRef) -> ActionResult:
    """End the rate-limit window now in force (BullMQ's limiter key): the next worker to ask
    takes jobs at once, and the limit itself stays, counting from that job. A worker already
    asleep until the window's end (Node's are) wakes at that end. ``released`` says whether a
    window was in force."""
    queue = queue_for_actions(ref)
    async with translate_bullmq_errors():
        removed = int(await queue.removeRateLimitKey())
    return ActionResult(
        "rate-limit-release", ref.slug, count=removed, detail={"released": bool(removed)}
    )
