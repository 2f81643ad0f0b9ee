"""Cancelling a job this worker runs, when someone asks (``cancelJob``, as on BullMQ's workers).

The handler's run is cancelled where it stands: an ``async def`` handler gets a
``CancelledError`` at its next ``await``; a plain function, which no one can stop from outside
its thread, sees ``ctx.cancelled`` turn true (to poll), and its attempt ends at once all the
same (it runs on, holding a thread, until it returns; what it returns is dropped). The job then
fails through BullMQ's scripts with the reason given: for good (``JobCancelled``, an
``UnrecoverableError``), or with ``retry`` as an ordinary failed attempt.

A cancel can be lost on the way: Python 3.11's ``asyncio.wait_for`` returns its result and
drops the cancel when what it waits for finishes at that moment, and redis-py sends every
command through it. The dashboard asks again while the job stays active, and each request
cancels the handler again, so a handler's cleanup on cancel should be short.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from bullmq import Job
from bullmq.custom_errors import UnrecoverableError

from queues.runner.json_logs import log_event


class JobCancelled(UnrecoverableError):  # type: ignore[misc]
    """The job was cancelled: it fails for good, whatever attempts it has left."""


class JobCancelledForRetry(Exception):
    """The job was cancelled, and may run again: its attempts and backoff decide."""


class Cancels:
    """Mixed into a worker of either store, before the package's ``Worker`` (whose
    ``cancelJob`` it replaces); its handler runs through :meth:`_handle`."""

    name: str
    _abandoning: bool  # the drain's deadline cancels handlers too: not a cancel
    # The task running each job's handler, while it runs; the cancels asked for running jobs
    # (job id -> (reason, retry)), until the job's end is recorded.
    _handlers: dict[str, tuple[asyncio.Task[Any], Job]]
    _cancels: dict[str, tuple[str, bool]]
    # The jobs ever cancelled: a plain function may look after its job's end was recorded.
    _cancelled_jobs: weakref.WeakSet[Job]

    def cancelJob(self, job_id: str, reason: str | None = None, retry: bool = False) -> bool:
        """Cancel job ``job_id`` if this worker runs its handler; False when it does not."""
        running = self._handlers.get(str(job_id))
        if running is None or running[0].done():
            return False
        task, job = running
        self._cancelled_jobs.add(job)
        first = str(job_id) not in self._cancels
        self._cancels[str(job_id)] = (reason or "Cancelled", retry)
        if first:
            log_event("cancelling", queue=self.name, job_id=str(job_id), retry=retry)
        task.cancel()
        return True

    def cancelAllJobs(self, reason: str | None = None) -> None:
        for job_id in list(self._handlers):
            self.cancelJob(job_id, reason)

    def cancel_requested(self, job: Job) -> bool:
        """Whether someone asked to cancel ``job`` (a plain function's ``ctx.cancelled``)."""
        return job in self._cancelled_jobs

    async def _handle(self, job: Job) -> Any:
        """The job's handler (``self.dispatch``), ended by a cancel as the module says."""
        job_id = str(job.id)
        task = asyncio.current_task()
        assert task is not None
        self._handlers[job_id] = (task, job)
        try:
            result = await self.dispatch(job)  # type: ignore[attr-defined]
        except asyncio.CancelledError:
            if job_id not in self._cancels or self._abandoning:
                raise  # a stop, not a cancel
            _uncancel(task)
            raise self._cancelled(job_id) from None
        finally:
            self._handlers.pop(job_id, None)
        if job_id in self._cancels:
            # The cancel came as the handler returned (or a library swallowed it on the way):
            # what was asked for still happens.
            _uncancel(task)
            raise self._cancelled(job_id)
        return result

    def _cancelled(self, job_id: str) -> Exception:
        reason, retry = self._cancels[job_id]
        return JobCancelledForRetry(reason) if retry else JobCancelled(reason)


def _uncancel(task: asyncio.Task[Any]) -> None:
    # Every request cancelled the task (or a lost cancel left its count up): the job's end
    # is recorded in this task next, which must not count as being cancelled any more.
    while task.cancelling():
        task.uncancel()
