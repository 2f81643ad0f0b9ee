"""Stopping a worker: it takes no more jobs, lets in-flight ones finish until a deadline, then
abandons what is left (such jobs stay active and are recovered as stalled by another worker) and
names them, with the jobs whose end could not be recorded earlier."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from queues.cancelling import cancel_and_wait
from queues.runner.job_loop.job_end import JobEnds
from queues.runner.json_logs import log_event
from queues.runner.settle import AWAY


class Drain(JobEnds):
    # The tasks running jobs (with the jobs each finish fetched), and whether the drain's
    # deadline cancelled them.
    _slots: set[asyncio.Future[Any]]
    _abandoning: bool

    def _busy(self) -> set[asyncio.Future[Any]]:
        return {task for task in (*self.processing, *self._slots) if not task.done()}

    async def drain(self, deadline: float, force: asyncio.Event | None = None) -> list[str]:
        """Stop taking jobs and wait for in-flight ones until ``deadline`` (loop time) or
        ``force``. Returns the ids of jobs abandoned then (they stay active in Redis).
        """
        self.draining = True  # no fetch-next from now on
        await self.pause(True)  # the run loop takes no more jobs; the blocking wait ends
        abandoned = await abandon_at(self, deadline, force)
        left = [job_id for job_id in await self._still_active() if job_id not in abandoned]
        for job_id in left:
            log_event("abandoned", queue=self.name, job_id=job_id, why="its end was not recorded")
        return abandoned + left

    async def _still_active(self) -> list[str]:
        """The jobs left active earlier that still are (Redis away: all of them)."""
        found = []
        for job_id in list(self.left_active):
            try:
                active = await self.backend.isJobInState("active", job_id)
            except AWAY:
                active = True
            if active:
                found.append(job_id)
        return found


class Stoppable(Protocol):
    """A worker that :func:`abandon_at` can stop: its running jobs and their tasks."""

    name: str
    jobs: set[Any]
    _abandoning: bool
    forceClosing: bool

    def _busy(self) -> set[asyncio.Future[Any]]: ...


async def abandon_at(worker: Stoppable, deadline: float, force: asyncio.Event | None) -> list[str]:
    """Wait for ``worker``'s in-flight jobs until ``deadline`` (loop time) or ``force``, then
    cancel what still runs; the ids of the jobs abandoned so (they stay active)."""
    loop = asyncio.get_running_loop()
    forced = asyncio.ensure_future(force.wait()) if force is not None else None
    busy = worker._busy()
    try:
        while busy and not (force is not None and force.is_set()):
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            waits = {*busy, forced} if forced is not None else busy
            await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            busy = worker._busy()
    finally:
        if forced is not None:
            forced.cancel()
    abandoned: list[str] = []
    if busy:
        abandoned = [str(job.id) for job, _token in list(worker.jobs)]
        worker._abandoning = True
        worker.forceClosing = True
        await cancel_and_wait(*busy)
    for job_id in abandoned:
        log_event("abandoned", queue=worker.name, job_id=job_id, why="running at the deadline")
    return abandoned
