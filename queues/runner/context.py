"""What a handler may know and do about the job it runs: progress and log lines, written
through BullMQ (``job.updateProgress`` / ``job.log``) so the dashboard shows them live.

Async handlers get a :class:`JobContext` and ``await ctx.progress(50)``; handlers that are plain
functions run in a thread and get a :class:`SyncJobContext`, whose calls block until Redis has
the update. ``ctx.cancelled`` says whether someone asked to cancel the job (the dashboard's
*Cancel*): an async handler is cancelled anyway; a plain function should poll it in long loops
and return, since nothing can stop it from outside its thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from bullmq import Job

from queues.runner.settle import until_recorded

JobProgress = int | float | dict[str, Any]

# A sync handler's progress call waits this long for the event loop before giving up.
_SYNC_CALL_TIMEOUT = 30.0


@dataclass
class JobContext:
    queue: str
    job_id: str
    name: str
    attempt: int  # 1 for the first attempt
    max_attempts: int
    job: Job

    @property
    def cancelled(self) -> bool:
        asked = getattr(self.job.queue, "cancel_requested", None)
        return bool(asked is not None and asked(self.job))

    async def progress(self, value: JobProgress) -> None:
        await self._while_locked(lambda: self.job.updateProgress(value))

    async def log(self, line: str) -> None:
        await self._while_locked(lambda: self.job.log(line))

    async def _while_locked(self, call: Callable[[], Awaitable[Any]]) -> None:
        # A Redis restart while the handler runs must not fail the job, which would run its
        # work again: the update is retried while the job's lock lasts. (A log line may then
        # be written twice; progress is the same value again.)
        worker = self.job.queue
        lock_s = float(getattr(worker, "opts", {}).get("lockDuration", 30_000)) / 1000
        fallback = asyncio.get_running_loop().time() + lock_s
        lock_until = getattr(worker, "lock_until", None)

        def until() -> float:
            return float(lock_until(self.job_id, fallback)) if lock_until else fallback

        await until_recorded(call, until)


class SyncJobContext:
    """The same, for a handler running in a worker thread."""

    def __init__(self, context: JobContext, loop: asyncio.AbstractEventLoop) -> None:
        self._context = context
        self._loop = loop
        self.queue = context.queue
        self.job_id = context.job_id
        self.name = context.name
        self.attempt = context.attempt
        self.max_attempts = context.max_attempts

    @property
    def cancelled(self) -> bool:
        return self._context.cancelled

    def progress(self, value: JobProgress) -> None:
        self._wait(lambda: self._context.progress(value))

    def log(self, line: str) -> None:
        self._wait(lambda: self._context.log(line))

    def _wait(self, call: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``call()`` on the worker's loop and wait for it. The coroutine is made on the
        loop itself: one made here would be left unrun if the loop stopped first."""
        done: concurrent.futures.Future[None] = concurrent.futures.Future()

        def finished(task: asyncio.Task[None]) -> None:
            if task.cancelled():
                done.set_exception(asyncio.CancelledError())
            elif (error := task.exception()) is not None:
                done.set_exception(error)
            else:
                done.set_result(None)

        def start() -> None:
            if done.set_running_or_notify_cancel():
                asyncio.ensure_future(call()).add_done_callback(finished)

        self._loop.call_soon_threadsafe(start)  # a closed loop raises here: the worker stopped
        done.result(_SYNC_CALL_TIMEOUT)
