"""Dead letters on a Postgres store: when a job's final attempt fails, BullMQ's own
``move_to_failed`` and ``add_job`` (the Python package's backend calls) run in one transaction
on the worker's connection. ``move_to_failed`` checks the job's lock first: if this worker no
longer holds the job, it refuses and the copy is rolled back with it.

The copy is the same document as on Redis (queues/runner/dead_letter.py), in the dead-letter
queue of the same store; its id ``<queue>.<job id>`` makes a second copy of one job a no-op.
"""

from __future__ import annotations

import json
from typing import Any

from bullmq import Job, Queue
from bullmq.backends.postgres_backend import PostgresBackend

from queues.runner.dead_letter import dead_letter_entry, dead_letter_id, stacktrace_text
from queues.runner.postgres.connection import WorkerConnection

__all__ = ["dead_letter_id", "dead_letter_queue", "fail_finally"]


def dead_letter_queue(name: str, connection: WorkerConnection) -> Queue:
    """A bullmq Queue for the dead letters, on ``connection`` (a worker's own)."""
    queue = Queue(name, {"backend": "postgres", "schema": connection.schema})
    queue.backend = PostgresBackend(name, connection, owns_connection=False)
    return queue


async def fail_finally(
    worker: Any, dead_letters: Queue | None, job: Job, token: str, error: BaseException
) -> None:
    """Move ``job`` to failed for good and copy it to ``dead_letters``, both or neither.
    Raises as bullmq's backend does (e.g. the lock was lost)."""
    reason = str(error) or type(error).__name__
    stack = stacktrace_text(error)
    job.failedReason = reason
    job.stacktrace = [*(job.stacktrace or []), stack]
    limit = job.opts.get("stackTraceLimit")
    if limit:
        job.stacktrace = job.stacktrace[-limit:]
    fields = {
        "failedReason": reason,
        "stacktrace": json.dumps(job.stacktrace, separators=(",", ":"), allow_nan=False),
    }
    remove_on_fail = job.opts.get("removeOnFail", False)
    async with worker.connection.transaction():
        # The failure first: its lock check decides whether the copy is made at all.
        moved = await worker.backend.moveToFailed(job, reason, remove_on_fail, token, False, fields)
        if dead_letters is not None:
            entry = dead_letter_entry(dead_letters, job, worker, reason, stack)
            await dead_letters.backend.addJob(entry)
    job.finishedOn = moved["finishedOn"]
    job.attemptsMade += 1
