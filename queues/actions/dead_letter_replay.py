"""Dead-letter replay: a dead letter goes back to its original queue, through bullmq.

The dashboard's replay button and the worker runner's public API both call
:func:`replay_dead_letter`; the dead letters themselves are written by the runner
(queues/runner/dead_letter.py) and read by queues/reads/dead_letters.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import redis.asyncio as aioredis
from bullmq import Job, Queue

from queues.actions.job_copies import kept_opts
from queues.errors import Conflict, JobNotFound, QueueDataError, QueueNotFound
from queues.reads.dead_letters import dead_letter_ref
from queues.reads.keys import QueueRef
from queues.redis.connections import own_key_prefix
from queues.redis.restricted import without_info
from queues.redis.write_once import write_once_client

# Whether the caller may act on the original's queue; the dashboard asks its access rules.
Permit = Callable[[QueueRef], Awaitable[bool]]


class ReplayRefused(QueueNotFound):
    """The dead letter names a queue it may not go back to: answered as a queue that does
    not exist, whatever the reason, so that a crafted dead letter learns nothing."""

    def __init__(self, original: QueueRef) -> None:
        super().__init__(f"Unknown queue {original.slug!r}")
        self.original = original


@dataclass(frozen=True)
class Replayed:
    queue: str
    job_id: str
    dead_letter_id: str
    how: Literal["retried", "re-added"]

    def as_json(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "jobId": self.job_id,
            "deadLetterId": self.dead_letter_id,
            "how": self.how,
        }


def _queue_on(client: aioredis.Redis, ref: QueueRef) -> Queue:
    # The replay closes its client itself, once, after both queues are done with it.
    queue = without_info(Queue(ref.name, {"connection": client, "prefix": ref.prefix}))
    queue.backend.owns_connection = False
    return queue


def _original(entry: Job, dead_letters: QueueRef) -> tuple[QueueRef, str, dict[str, Any]]:
    data = entry.data
    if not (isinstance(data, dict) and isinstance(data.get("queue"), str) and data.get("jobId")):
        raise QueueDataError(f"Job {entry.id!r} of {dead_letters.slug!r} is not a dead letter")
    prefix = data.get("prefix") or dead_letters.prefix
    # The dead letter queue is kept in the original's Redis (the runner's connection).
    return QueueRef(str(prefix), data["queue"], dead_letters.connection), str(data["jobId"]), data


def _readable(ref: QueueRef) -> bool:
    """Whether ``ref`` is a queue this dashboard reads: a configured prefix, a name BullMQ
    accepts, never Bullpen's own keys. A dead letter's data is job data, written by anyone who
    may add a job to the dead-letter queue, so none of it is trusted."""
    own = {own_key_prefix(ref.connection), own_key_prefix(ref.connection).strip("{}")}
    if any(ref.prefix == mine or ref.prefix.startswith(f"{mine}:") for mine in own):
        return False
    try:
        return QueueRef.from_slug(ref.slug) == ref
    except QueueNotFound:
        return False


async def replay_dead_letter(
    dead_letter_id: str, *, dead_letters: QueueRef | None = None, permit: Permit | None = None
) -> Replayed:
    """Send a dead letter back to its original queue, through bullmq, and remove it.

    If the original job is still in its queue's ``failed`` set, it is retried with its attempts
    reset (same id, history kept). If it was removed since, a new job with the same name, data
    and options is added (with the original id when it was a custom one). Raises JobNotFound
    (no such dead letter), Conflict (the original is not failed any more: waiting, active...)
    or ReplayRefused (the original's queue is not one this dashboard reads, or ``permit``
    refuses it), before anything is changed.
    """
    ref = dead_letters or dead_letter_ref()
    client = write_once_client(
        ref.connection
    )  # a replay is an action: sent once, never applied twice
    try:
        dead_queue = _queue_on(client, ref)
        entry = await Job.fromId(dead_queue, dead_letter_id)
        if entry is None:
            raise JobNotFound(f"No dead letter {dead_letter_id!r} in {ref.slug!r}")
        original_ref, job_id, data = _original(entry, ref)
        if not _readable(original_ref) or (permit is not None and not await permit(original_ref)):
            raise ReplayRefused(original_ref)
        original = _queue_on(client, original_ref)
        state = await original.getJobState(job_id)
        if state == "failed":
            job = await Job.fromId(original, job_id)
            await job.retry("failed", {"resetAttemptsMade": True, "resetAttemptsStarted": True})
            new_id, how = job_id, "retried"
        elif state == "unknown":
            opts = kept_opts(data.get("opts"))
            if not job_id.isdigit():
                opts["jobId"] = job_id  # a custom (business) id: keep it
            added = await original.add(str(data.get("name") or "replay"), data.get("data"), opts)
            new_id, how = str(added.id), "re-added"
        else:
            raise Conflict(
                f"Job {job_id!r} of {original_ref.slug!r} is {state}, not failed: "
                "it is not dead any more"
            )
        await dead_queue.remove(dead_letter_id)
    finally:
        await client.aclose()
    return Replayed(original_ref.slug, new_id, dead_letter_id, how)  # type: ignore[arg-type]
