"""Recording a job's end (completed, failed, retried, deferred) with the next job fetched by
the same call; while Redis is away the call is retried as long as the job's lock lasts, and a job
whose end could not be recorded is remembered as left active, for the shutdown's report."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bullmq import Job, Queue
from bullmq.custom_errors import UnrecoverableError

from queues.runner.dead_letter import dead_letter_id, fail_finally
from queues.runner.dispatch import Deferred
from queues.runner.finish import Completer
from queues.runner.job_loop.fetch_next import FetchNext, now_ms
from queues.runner.json_logs import log_event
from queues.runner.settle import AWAY, LandedEarlier, until_recorded

# States a job may be in once a finishing call landed (a removed job is "unknown").
COMPLETED = ("completed", "unknown")
FAILED = ("failed", "unknown")
RETRIED = ("delayed", "waiting", "prioritized", "paused")
DEFERRED = ("delayed",)
# Jobs remembered as left active (their end never reached Redis), for the shutdown's report.
MAX_LEFT_ACTIVE = 10_000


class JobEnds(FetchNext):
    completer: Completer
    dead_letters: Queue | None
    dead_letter_queue: str | None
    # Loop time until which each running job's lock holds (taken, then renewed).
    _lock_until: dict[str, float]
    # Jobs whose end could not be recorded: active in Redis until another worker takes them
    # over as stalled (dict: ordered, oldest dropped first).
    left_active: dict[str, None]

    def lock_until(self, job_id: str, default: float) -> float:
        """Loop time until which this worker's lock on the job holds, as far as it knows."""
        return self._lock_until.get(job_id, default)

    def _lock_expiry(self) -> float:
        return asyncio.get_running_loop().time() + float(self.opts["lockDuration"]) / 1000

    def _on_locks_renewed(self, renewed: dict[str, Any], *_: Any) -> None:
        until = self._lock_expiry()
        for job_id in renewed.get("jobIds") or ():
            if str(job_id) in self._lock_until:
                self._lock_until[str(job_id)] = until

    async def _record(
        self, job: Job, call: Callable[[], Awaitable[Any]], landed: tuple[str, ...]
    ) -> Any:
        """``call()`` (a finishing script), retried while Redis is away and the lock lasts.
        An earlier attempt found to have landed answers None: no next job came with it."""
        try:
            return await call()
        except AWAY as error:
            away = error  # Redis is away: try again while the lock lasts
        job_id = str(job.id)
        try:
            return await until_recorded(
                call,
                lambda: self.lock_until(job_id, 0.0),
                lambda: self.backend.getState(job_id),
                landed,
                failed=away,
            )
        except LandedEarlier:
            return None

    def _not_recorded(self, job: Job, error: BaseException, fields: dict[str, Any]) -> None:
        self._report(error, fields)
        if isinstance(error, AWAY):
            # Still active in Redis: another worker runs it again once its lock expires.
            self.left_active[str(job.id)] = None
            while len(self.left_active) > MAX_LEFT_ACTIVE:
                del self.left_active[next(iter(self.left_active))]

    async def _completed(
        self, job: Job, token: str, result: Any, started: float, fields: dict[str, Any]
    ) -> Job | None:
        try:
            moved = await self._record(
                job,
                lambda: self.completer.complete(
                    job,
                    result,
                    job.opts.get("removeOnComplete", False),
                    token,
                    fetch_next=not self.draining,
                ),
                COMPLETED,
            )
        except Exception as error:  # e.g. the lock was lost and another worker has the job
            self._not_recorded(job, error, fields)
            return None
        moved = moved or {"result": None, "finishedOn": now_ms()}
        job.returnvalue = result
        job.attemptsMade += 1
        job.finishedOn = moved["finishedOn"]
        log_event("completed", duration_ms=since(started), **fields)
        self.emit("completed", job, result)
        return await self._next(moved["result"], token)

    def _is_final(self, job: Job, error: BaseException) -> bool:
        attempts = int(job.opts.get("attempts") or 1)
        return bool(
            job.deferredFailure
            or job.discarded
            or isinstance(error, UnrecoverableError)
            or job.attemptsMade + 1 >= attempts
        )

    async def _failed(
        self, job: Job, token: str, error: Exception, started: float, fields: dict[str, Any]
    ) -> Job | None:
        final = self._is_final(job, error)
        stacktrace = list(job.stacktrace or [])

        async def fail() -> Any:
            job.stacktrace = list(stacktrace)  # each attempt adds this failure's trace once
            if final:
                return await fail_finally(self, self.dead_letters, job, token, error)
            # bullmq's own path: backoff, then delayed (or straight back to wait).
            return await job.moveToFailed(error, token, not self.draining)

        try:
            raw = await self._record(job, fail, FAILED if final else RETRIED)
        except Exception as failure:
            self._not_recorded(job, failure, fields)
            return None
        reason = str(error) or type(error).__name__
        extra: dict[str, Any] = {"final": final, "error": reason}
        if not final:
            extra["retry_in_ms"] = int(job.delay or 0)
        log_event("failed", duration_ms=since(started), **fields, **extra)
        if final and self.dead_letters is not None:
            log_event(
                "dead-lettered",
                dead_letter_queue=self.dead_letter_queue,
                dead_letter_id=dead_letter_id(self.name, str(job.id)),
                **fields,
            )
        self.emit("failed", job, error)
        return await self._next(raw, token)

    async def _defer(
        self, job: Job, token: str, deferral: Deferred, fields: dict[str, Any]
    ) -> Job | None:
        try:
            raw = await self._record(
                job,
                lambda: self.backend.moveToDelayed(
                    job.id,
                    now_ms(),
                    deferral.wait_ms,
                    token,
                    {"skipAttempt": True, "fetchNext": not self.draining, "workerOpts": self.opts},
                ),
                DEFERRED,
            )
        except Exception as error:
            self._not_recorded(job, error, fields)
            return None
        log_event("deferred", tenant=deferral.tenant, wait_ms=deferral.wait_ms, **fields)
        return await self._next(raw, token)

    def _report(self, error: BaseException, fields: dict[str, Any]) -> None:
        log_event("error", error=f"{type(error).__name__}: {error}", **fields)


def since(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()``), for the log lines."""
    return round((time.perf_counter() - started) * 1000, 2)
