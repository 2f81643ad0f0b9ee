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
dashboard shows it like any other queue. :func:`replay_dead_letter` sends it back.
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass
from typing import Any, Literal

from bullmq import Job, Queue
from bullmq.scripts import raw2NextJobData
from redis.exceptions import WatchError

from queues.dead_letters import dead_letter_ref
from queues.errors import Conflict, JobNotFound, QueueDataError
from queues.keys import QueueRef
from queues.runner.job_ids import business_job_id
from queues.runner.queue_handles import bullmq_queue
from queues.write_once import write_once_client

# Job options a replayed job keeps; ids, delays, repeat and parent links belong to the original.
_REPLAY_OPTS = (
    "attempts",
    "backoff",
    "priority",
    "lifo",
    "removeOnComplete",
    "removeOnFail",
    "keepLogs",
    "stackTraceLimit",
    "sizeLimit",
)
# Watch conflicts (the lock renewed between WATCH and EXEC) before giving up on the copy.
_WATCH_RETRIES = 5


def dead_letter_id(queue: str, job_id: str) -> str:
    return business_job_id(queue, job_id)


def stacktrace_text(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def _entry(dead_letters: Queue, job: Job, worker: Any, reason: str, stack: str) -> Job:
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
                    entry = _entry(dead_letters, job, worker, reason, stack)
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


def _original(entry: Job, dead_letters: QueueRef) -> tuple[QueueRef, str, dict[str, Any]]:
    data = entry.data
    if not (isinstance(data, dict) and isinstance(data.get("queue"), str) and data.get("jobId")):
        raise QueueDataError(f"Job {entry.id!r} of {dead_letters.slug!r} is not a dead letter")
    prefix = data.get("prefix") or dead_letters.prefix
    return QueueRef(str(prefix), data["queue"]), str(data["jobId"]), data


async def replay_dead_letter(
    dead_letter_id: str, *, dead_letters: QueueRef | None = None
) -> Replayed:
    """Send a dead letter back to its original queue, through bullmq, and remove it.

    If the original job is still in its queue's ``failed`` set, it is retried with its attempts
    reset (same id, history kept). If it was removed since, a new job with the same name, data
    and options is added (with the original id when it was a custom one). Raises JobNotFound
    (no such dead letter) or Conflict (the original is not failed any more: waiting, active...).
    """
    ref = dead_letters or dead_letter_ref()
    client = write_once_client()  # a replay is an action: sent once, never applied twice
    try:
        dead_queue = bullmq_queue(client, ref)
        entry = await Job.fromId(dead_queue, dead_letter_id)
        if entry is None:
            raise JobNotFound(f"No dead letter {dead_letter_id!r} in {ref.slug!r}")
        original_ref, job_id, data = _original(entry, ref)
        original = bullmq_queue(client, original_ref)
        state = await original.getJobState(job_id)
        if state == "failed":
            job = await Job.fromId(original, job_id)
            await job.retry("failed", {"resetAttemptsMade": True, "resetAttemptsStarted": True})
            new_id, how = job_id, "retried"
        elif state == "unknown":
            kept = (data.get("opts") or {}).items()
            opts = {key: value for key, value in kept if key in _REPLAY_OPTS}
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
