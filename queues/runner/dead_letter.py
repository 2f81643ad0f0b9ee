"""The dead-letter queue: where a job goes when its last attempt fails, and how it comes back.

When a job's final attempt fails (attempts used up, an ``UnrecoverableError``, or "stalled more
than allowable limit"), the worker moves it to ``failed`` *and* adds a copy to the dead-letter
queue (``BULLPEN["WORKER"]["dead_letter_queue"]``, default ``dead-letter``, under the first
prefix) in one Redis transaction, watched on the job's lock: both happen or neither does, and
neither happens if this worker no longer holds the job. A failure with attempts left is a retry,
never a dead letter.

A dead letter is an ordinary BullMQ job that no worker consumes (it stays ``waiting``), named
like the original, with id ``<queue>.<job id>`` and data ``{"queue", "prefix", "jobId", "name",
"failedReason", "attemptsMade", "failedAt", "worker", "stacktrace", "opts", "data"}``, so the
dashboard shows it like any other queue; queues/actions/dead_letter_replay.py sends it back.
"""

from __future__ import annotations

import json
import time
import traceback
from typing import Any

from bullmq import Job, Queue
from bullmq.scripts import raw2NextJobData
from redis.exceptions import WatchError

from queues.errors import Conflict
from queues.runner.job_ids import business_job_id

# Watch conflicts (the lock renewed between WATCH and EXEC) before giving up on the copy.
_WATCH_RETRIES = 5


def dead_letter_id(queue: str, job_id: str) -> str:
    return business_job_id(queue, job_id)


def stacktrace_text(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def dead_letter_entry(dead_letters: Queue, job: Job, worker: Any, reason: str, stack: str) -> Job:
    # Small fields first: a list row reads only the first LIST_FIELD_CAP bytes of the data,
    # and shows the reason from them however big the original job's data is.
    data = {
        "queue": worker.name,
        "prefix": worker.prefix,
        "jobId": job.id,
        "name": job.name,
        "failedReason": reason,
        "attemptsMade": job.attemptsMade + 1,
        "failedAt": int(time.time() * 1000),
        "worker": worker.workerName,
        "stacktrace": stack,
        "opts": {key: value for key, value in job.opts.items() if key != "jobId"},
        "data": job.data,
    }
    return Job(dead_letters, job.name, data, {"jobId": dead_letter_id(worker.name, job.id)})


async def fail_finally(
    worker: Any, dead_letters: Queue | None, job: Job, token: str, error: BaseException
) -> list[Any] | None:
    """Move ``job`` to failed for good, copying it to ``dead_letters`` in the same transaction.

    Returns the next job's raw data when one was fetched (never: the final failure does not
    fetch), None otherwise. Raises like bullmq's moveToFinished (e.g. the lock was lost).
    """
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
    keys, args = worker.scripts.moveToFailedArgs(
        job, reason, job.opts.get("removeOnFail", False), token, False, fields
    )
    lock_key = f"{worker.keys['']}{job.id}:lock"
    result: Any = None
    for _ in range(_WATCH_RETRIES):
        async with worker.client.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(lock_key)
                if dead_letters is not None and await pipe.get(lock_key) == token:
                    pipe.multi()
                    entry = dead_letter_entry(dead_letters, job, worker, reason, stack)
                    await dead_letters.scripts.addJob(entry, pipe)
                    await worker.scripts.commands["moveToFinished"](
                        keys=keys, args=args, client=pipe
                    )
                    result = (await pipe.execute())[1]
                else:
                    # Not ours any more (or no dead-letter queue): let the script say so.
                    await pipe.unwatch()
                    result = await worker.scripts.commands["moveToFinished"](keys=keys, args=args)
                break
            except WatchError:
                continue
    else:
        raise Conflict(f"Job {job.id} kept changing while it was being failed")
    if isinstance(result, int) and result < 0:
        raise worker.scripts.finishedErrors(
            {"code": result, "jobId": job.id, "command": "moveToFinished", "state": "active"}
        )
    job.finishedOn = args[1]
    job.attemptsMade += 1
    return raw2NextJobData(result) if result else None
