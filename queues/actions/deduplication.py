"""Releasing deduplication keys through BullMQ's removeDeduplicationKey script.

The script deletes the key only while it still holds the job id it is given (what Node's
``job.removeDeduplicationKey()`` runs): a key taken by a new job between the read and the
release is left to that job.
"""

from __future__ import annotations

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.actions.shipped_scripts import shipped_script
from queues.errors import JobNotFound
from queues.reads.deduplication import dedup_key, dedup_page, held_by
from queues.reads.keys import QueueRef

# Keys one release-orphans call looks at: thousands are released in a few calls, each
# answered in bounded time, the cursor saying where the next one goes on.
ORPHAN_SCAN_PAGES = 20
ORPHAN_PAGE = 500


async def _remove(ref: QueueRef, dedup_id: str, job_id: str) -> bool:
    queue = queue_for_actions(ref)
    script = shipped_script(queue.client, "removeDeduplicationKey-1.lua")
    removed = await script(keys=[dedup_key(ref, dedup_id)], args=[job_id])
    return bool(removed)


async def release(ref: QueueRef, dedup_id: str) -> ActionResult:
    """Raises JobNotFound (404) when no key of that id exists."""
    job_id, _ttl = await held_by(ref, dedup_id)
    if job_id is None:
        raise JobNotFound(f"No deduplication key {dedup_id!r} in queue {ref.slug!r}")
    async with translate_bullmq_errors(job_id):
        removed = await _remove(ref, dedup_id, job_id)
    return ActionResult(
        "release-dedup",
        ref.slug,
        [job_id],
        int(removed),
        {"deduplicationId": dedup_id},
    )


async def release_orphans(ref: QueueRef, cursor: int = 0) -> ActionResult:
    """Release every key whose job is gone or finished, from ``cursor`` on, over at most
    ORPHAN_SCAN_PAGES pages; ``next`` (not None) says the scan has more to look at."""
    released: list[str] = []
    job_ids: list[str] = []
    next_cursor: str | None = None
    async with translate_bullmq_errors():
        for _ in range(ORPHAN_SCAN_PAGES):
            page = await dedup_page(ref, cursor, ORPHAN_PAGE)
            for key in page.keys:
                if key.orphan and await _remove(ref, key.id, key.job_id):
                    released.append(key.id)
                    job_ids.append(key.job_id)
            next_cursor = page.next
            if next_cursor is None:
                break
            cursor = int(next_cursor)
    return ActionResult(
        "release-dedup-orphans",
        ref.slug,
        job_ids,
        len(released),
        {"released": released, "next": next_cursor},
    )
