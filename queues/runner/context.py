"""What a handler may know and do about the job it runs: progress and log lines, written
through BullMQ (``job.updateProgress`` / ``job.log``) so the dashboard shows them live.

Async handlers get a :class:`JobContext` and ``await ctx.progress(50)``; handlers that are plain
functions run in a thread and get a :class:`SyncJobContext`, whose calls block until Redis has
the update.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from bullmq import Job

Progress = int | float | dict[str, Any]

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

    async def progress(self, value: Progress) -> None:
        await self.job.updateProgress(value)

    async def log(self, line: str) -> None:
        await self.job.log(line)


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

    def progress(self, value: Progress) -> None:
        self._wait(self._context.progress(value))

    def log(self, line: str) -> None:
        self._wait(self._context.log(line))

    def _wait(self, coroutine: Any) -> None:
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(_SYNC_CALL_TIMEOUT)
