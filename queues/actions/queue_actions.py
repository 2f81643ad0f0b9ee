"""Actions on a whole queue (or every queue), through bullmq's scripts.

Retry-all, promote-all and clean run as bulk actions instead (queues/bulk/).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.errors import BadParameter, Conflict
from queues.reads.counts import summary
from queues.reads.discovery import discovered, forget
from queues.reads.keys import QueueRef
from queues.reads.pause_reasons import write_reason
from queues.reads.store import other_store
from queues.redis.clients import get_client


async def pause(ref: QueueRef, reason: str = "") -> ActionResult:
    """Pause, keeping ``reason`` beside the queue (queues/reads/pause_reasons.py); a pause
    without one removes the reason of an earlier pause."""
    # Kept first: the live reader reads it as it sees the pause, for the pages open.
    await write_reason(ref, reason)
    async with translate_bullmq_errors():
        await queue_for_actions(ref).pause()
    return ActionResult("pause", ref.slug, detail={"reason": reason} if reason else {})


async def resume(ref: QueueRef) -> ActionResult:
    async with translate_bullmq_errors():
        await queue_for_actions(ref).resume()
    await write_reason(ref, "")
    return ActionResult("resume", ref.slug)


async def all_queues() -> list[QueueRef]:
    return list((await discovered()).queues)


async def for_each_queue(
    action: str, act: Callable[[QueueRef], Awaitable[ActionResult]], refs: list[QueueRef]
) -> ActionResult:
    for ref in refs:
        await act(ref)
    return ActionResult(action, None, count=len(refs), detail={"queues": [r.slug for r in refs]})


async def empty(ref: QueueRef) -> ActionResult:
    """Remove every waiting, prioritized and delayed job (not active, completed or failed)."""
    if other_store(ref.connection) is not None:
        # BullMQ's Postgres drain, after its counts: it answers no number of its own.
        counts = (await summary(ref)).counts
        before = sum(counts[state] for state in ("waiting", "prioritized", "delayed", "paused"))
        async with translate_bullmq_errors():
            await queue_for_actions(ref).drain(delayed=True)
        return ActionResult("empty", ref.slug, count=before)
    reader = get_client(ref.connection)
    async with translate_bullmq_errors():
        async with reader.pipeline(transaction=False) as pipe:
            for key in ("wait", "prioritized", "delayed", "paused"):
                pipe.llen(ref.key(key)) if key in ("wait", "paused") else pipe.zcard(ref.key(key))
            before = sum(int(n) for n in await pipe.execute())
        await queue_for_actions(ref).drain(delayed=True)
    return ActionResult("empty", ref.slug, count=before)


async def obliterate(ref: QueueRef, confirm: str, *, force: bool = False) -> ActionResult:
    """Destroy the queue and everything in it. It must be paused first, and the caller must
    type its name: an irreversible action takes two deliberate steps. Jobs a worker holds
    (active) stop it unless ``force``: their workers then find them gone and cannot finish."""
    if confirm != ref.name:
        raise BadParameter("Type the queue's name to confirm obliterating it")
    if other_store(ref.connection) is not None:
        found = await summary(ref)
        paused, active = found.paused, found.counts["active"]
    else:
        reader = get_client(ref.connection)
        async with translate_bullmq_errors():
            paused = (await reader.hget(ref.key("meta"), "paused")) not in (None, "", "0")
            active = int(await reader.llen(ref.key("active")))
    if not paused:
        raise Conflict("Pause the queue before obliterating it")
    if not force and active:
        raise Conflict("The queue has active jobs: obliterate with force to destroy them too")
    async with translate_bullmq_errors():
        # BullMQ's own obliterate, batch by batch, without the pause Queue.obliterate writes
        # first: the queue is paused already, and that write is one Redis refuses at maxmemory,
        # when destroying a queue is how to free memory.
        backend = queue_for_actions(ref).backend
        while await backend.obliterate(1000, force) not in (None, 0, "0"):
            pass
    forget(ref)
    return ActionResult("obliterate", ref.slug, detail={"force": force})


async def add_job(ref: QueueRef, name: str, data: Any, opts: dict[str, Any]) -> ActionResult:
    """``opts`` are checked by the caller (the dashboard: dashboard/forms/job_options.py)."""
    if not name or not isinstance(name, str):
        raise BadParameter("A job needs a name")
    async with translate_bullmq_errors():
        job = await queue_for_actions(ref).add(name, data, opts)
    return ActionResult("add", ref.slug, [str(job.id)], 1)


async def remove_scheduler(ref: QueueRef, scheduler_id: str) -> ActionResult:
    async with translate_bullmq_errors():
        # BullMQ's removeJobScheduler (script or Postgres function) answers 0 when it removed
        # it, 1 when absent.
        missing = await queue_for_actions(ref).removeJobScheduler(scheduler_id)
    if missing:
        raise Conflict(f"No job scheduler {scheduler_id!r} in queue {ref.slug!r}")
    return ActionResult("remove-scheduler", ref.slug, detail={"scheduler": scheduler_id})
