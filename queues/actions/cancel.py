"""Cancelling an active job: a request to the worker that runs it, wherever that runs.

The request goes out on the queue's cancel channel (cancel_requests.py), or as a notification
of the queue's PostgreSQL store; the worker holding the job cancels it and fails it through
BullMQ's own scripts or SQL functions. This side then watches the job leave ``active`` for at
most ``CANCEL_WAIT`` seconds: a job still active by then belongs to a worker that does not
listen for cancel requests (or did not react), and is left as it was; the request's own
deadline keeps a late listener from acting on it after that answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from bullmq import Job, Queue

from queues.actions.bullmq_errors import translate_bullmq_errors
from queues.actions.cancel_requests import POSTGRES_CHANNEL, CancelRequest, channel, reason_for
from queues.actions.handles import queue_for_actions
from queues.actions.result import ActionResult
from queues.config.settings import get_config
from queues.errors import Conflict, JobNotFound
from queues.reads.keys import QueueRef
from queues.redis.connections import is_postgres

# How often the job's state is read while its worker is asked to cancel it.
POLL_S = 0.05
# How often the request is sent again while the job stays active.
ASK_AGAIN_S = 0.5


def cancel_wait_s() -> float:
    return float(get_config()["CANCEL_WAIT"])


async def cancel_job(
    ref: QueueRef, job_id: str, *, by: str, note: str = "", retry: bool = False
) -> ActionResult:
    """Ask the worker running ``job_id`` to cancel it; answered once the job left ``active``.

    The job ends failed with a reason naming ``by`` (and ``note``); for good unless ``retry``,
    which lets its attempts and backoff decide, as for any failed attempt."""
    wait_s = cancel_wait_s()
    async with translate_bullmq_errors(job_id):
        queue = queue_for_actions(ref)
        state = str(await queue.getJobState(job_id))
        if state == "unknown":
            raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
        if state != "active":
            raise Conflict(f"Job {job_id!r} is {state}; only an active job can be cancelled")
        reason = reason_for(by, note)
        until_ms = int(time.time() * 1000 + wait_s * 1000)
        request = CancelRequest(job_id, by, reason, retry, until_ms)
        kind = _PostgresAsk if is_postgres(ref.connection) else _RedisAsk
        ask = kind(ref, queue, request)
        attempt = await ask.attempt()
        listeners = await ask.send()

        async def ask_again() -> None:
            # A worker that had taken the job but not yet started its handler did not know
            # it: asked again while this attempt of the job is still active (not a retry's).
            if await ask.attempt() == attempt:
                await ask.send()

        state = await _left_active(queue, job_id, wait_s, ask_again)
        # The job may have ended by itself meanwhile; a cancelled one carries the reason
        # (kept by BullMQ even once a retry completed it).
        ended = await Job.fromId(queue, job_id) if state != "active" else None
    if state == "active":
        heard = "no worker listens for cancel requests" if listeners == 0 else "no worker reacted"
        raise Conflict(
            f"Job {job_id!r} is still active after {wait_s:g} s: {heard} on its queue "
            "(a Node worker needs the listener described in docs/api.md); it was left running"
        )
    if ended is None or ended.failedReason != reason:
        raise Conflict(f"Job {job_id!r} ended {state} before it could be cancelled")
    detail = {"state": state, "reason": reason, "retry": retry}
    return ActionResult("cancel", ref.slug, [job_id], 1, detail)


class _RedisAsk:
    """The request on the queue's pub/sub channel; Redis says how many heard it."""

    def __init__(self, ref: QueueRef, queue: Queue, request: CancelRequest) -> None:
        self.ref, self.queue, self.request = ref, queue, request

    async def attempt(self) -> object:
        return await self.queue.client.hget(self.ref.job_key(self.request.job_id), "atm")

    async def send(self) -> int | None:
        return int(await self.queue.client.publish(channel(self.ref), self.request.encode()))


class _PostgresAsk(_RedisAsk):
    """The request as a notification of the store (``NOTIFY bullpen_cancel``); a NOTIFY does
    not say whether anyone listens."""

    async def attempt(self) -> object:
        job = await Job.fromId(self.queue, self.request.job_id)
        return None if job is None else job.attemptsMade

    async def send(self) -> int | None:
        from queues.postgres.sessions import session  # psycopg: the postgres extra

        schema = str(self.queue.backend.connection.schema)
        payload = self.request.encode_for_store(self.ref.name, schema)
        await session(self.ref.connection).query(
            "SELECT pg_notify(%s, %s)", [POSTGRES_CHANNEL, payload]
        )
        return None


async def _left_active(
    queue: Queue, job_id: str, wait_s: float, ask_again: Callable[[], Awaitable[None]]
) -> str:
    """The job's state once it is no longer active, or ``"active"`` after ``wait_s``; the
    request is sent again every ``ASK_AGAIN_S`` meanwhile."""
    deadline = time.monotonic() + wait_s
    asked = time.monotonic()
    while True:
        state = str(await queue.getJobState(job_id))
        if state != "active" or time.monotonic() >= deadline:
            return state
        if time.monotonic() - asked >= ASK_AGAIN_S:
            await ask_again()
            asked = time.monotonic()
        await asyncio.sleep(POLL_S)
