"""Fetching jobs as Node's worker does: the next job comes back with the call that finished the
last one (fetch-next), a rate-limited queue waits the limiter's window instead of the drain
delay, and a job fetched as the drain began still runs here, where its lock is held."""

from __future__ import annotations

import time
from typing import Any

from bullmq import Job, Worker

from queues.runner.jobs import job_from_raw
from queues.runner.limiter import resume_at


def now_ms() -> int:
    return int(time.time() * 1000)


class FetchNext(Worker):  # type: ignore[misc]
    # The package's fetch state (set by bullmq's Worker), read and set below.
    drained: bool
    blockUntil: int
    limitUntil: int
    # Set once the drain begins: from then on a finish fetches no next job.
    draining: bool

    async def getNextJob(self, token: str) -> Job | None:
        job = await super().getNextJob(token)
        if job is not None and self.draining:
            # Fetched while the drain began: this worker holds its lock, so run it here.
            await self.processJob(job, token)
            return None
        return job

    async def nextJobFromJobData(
        self,
        job_data: dict[str, Any] | None = None,
        job_id: str | None = None,
        limit_until: int = 0,
        delay_until: int = 0,
        token: str | None = None,
    ) -> Job | None:
        # bullmq's, with the job built by job_from_raw (jobs.py) instead of Job.fromJSON.
        self.limitUntil = max(limit_until, 0) or 0
        if not job_data and not self.drained:
            self.drained = True
            self.blockUntil = 0
        if delay_until:
            self.blockUntil = max(int(delay_until), 0) or 0
        if not job_data:
            if limit_until and int(limit_until) > 0:
                # Rate limited: block on the marker until the limiter's window ends.
                self.blockUntil = resume_at(now_ms(), int(limit_until))
                self.drained = True
            return None
        self.drained = False
        job = job_from_raw(self, job_data, job_id)
        job.token = token
        if job.repeatJobKey:
            await self._schedule_next(job)
        return job

    async def _schedule_next(self, job: Job) -> None:
        """bullmq's: materialize the next iteration of the scheduler that produced ``job``."""
        try:
            await self.retryIfFailed(
                lambda: self._scheduleNextIteration(job),
                {"delay_in_ms": self.opts.get("runRetryDelay")},
            )
        except Exception as error:
            # The job is active already and still runs; its scheduler's next run is lost.
            message = f"Failed to add repeatable job for next iteration: {error}"
            self.emit("error", RuntimeError(message))

    async def _next(self, raw: Any, token: str) -> Job | None:
        if not raw or not isinstance(raw, list):
            return None
        job_data, job_id, limit_until, delay_until = raw
        job: Job | None = await self.nextJobFromJobData(
            job_data, job_id, int(limit_until or 0), int(delay_until or 0), token
        )
        return job
