"""A parent and its children: removing its unprocessed children (BullMQ's
removeUnprocessedChildren), detaching one child (removeChildDependency).

removeUnprocessedChildren removes the children still pending, with their own children; it
keeps those a worker holds (locked) and those already processed. Once no child is pending,
BullMQ moves the parent on (from waiting-children to waiting), as when its last child finishes.
"""

from __future__ import annotations

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.actions.shipped_scripts import shipped_script
from queues.errors import Conflict, JobNotFound
from queues.reads.keys import QueueRef


async def remove_unprocessed_children(ref: QueueRef, job_id: str) -> ActionResult:
    """Raises JobNotFound, or Conflict when the job has no pending child. The count is the
    direct children removed; ``kept`` says how many stay pending (held by a worker)."""
    queue = queue_for_actions(ref)
    job_key = queue.toKey(job_id)
    pending = f"{job_key}:dependencies"
    async with translate_bullmq_errors(job_id):
        if not await queue.client.exists(job_key):
            raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
        before = int(await queue.client.scard(pending))
        if not before:
            raise Conflict(f"Job {job_id!r} has no unprocessed children")
        remove = shipped_script(queue.client, "removeUnprocessedChildren-2.lua")
        await remove(keys=[job_key, queue.keys["meta"]], args=[queue.keys[""], job_id])
        kept = int(await queue.client.scard(pending))
    return ActionResult(
        "remove-unprocessed-children", ref.slug, [job_id], before - kept, {"kept": kept}
    )


async def detach_child(ref: QueueRef, job_id: str) -> ActionResult:
    """Take the job out of the dependencies its parent waits on (BullMQ's
    removeChildDependency): a parent left with none goes on to waiting, as when its last child
    finishes. Raises JobNotFound, or Conflict when the job has no parent waiting for it."""
    queue = queue_for_actions(ref)
    job_key = queue.toKey(job_id)
    async with translate_bullmq_errors(job_id):
        parent_key = await queue.client.hget(job_key, "parentKey")
        if not await queue.client.exists(job_key):
            raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
        if not parent_key:
            raise Conflict(f"Job {job_id!r} has no parent")
        parent_key = parent_key.decode() if isinstance(parent_key, bytes) else str(parent_key)
        detach = shipped_script(queue.client, "removeChildDependency-1.lua")
        answer = int(await detach(keys=[queue.keys[""]], args=[job_key, parent_key]))
    if answer == -5:
        raise Conflict(f"The parent of job {job_id!r} is gone")
    if answer == 1:
        raise Conflict(f"The parent of job {job_id!r} no longer waits for it")
    if answer != 0:
        raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
    return ActionResult("detach-child", ref.slug, [job_id], 1, {"parentKey": parent_key})
