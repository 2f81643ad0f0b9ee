"""The runner's worker on a Postgres store: the Python package's own worker on BullMQ's
Postgres backend (its LISTEN wait for jobs, its lock renewal and stalled checks, its SQL
functions for every move), running the registered handler with the runner's patterns:

- bounded concurrency (the queue's ``concurrency``, the package's own slots);
- fetch-next: completing a job fetches the next in the same statement, as Node's worker does;
- a limiter that waits its window (the package's worker would ask again at once);
- runner defaults for foreign jobs (attempts, exponential backoff, retention);
- a queue's ``timeout`` per attempt (dispatch.py);
- cancel: ``cancelJob`` ends a running handler as on Redis (job_loop/cancels.py); the
  dashboard's requests come through the store (cancel_listener.py);
- dead letters: the final failure and the dead-letter copy in one transaction (dead_letter.py);
- a graceful drain: no new jobs, in-flight ones finish until the deadline, the rest abandoned
  (active until another worker recovers them as stalled);
- a JSON log line per job event.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from typing import Any

from bullmq import Job, Queue, Worker
from bullmq.backends.postgres_backend import PostgresBackend
from bullmq.custom_errors import DelayedError, UnrecoverableError, WaitingChildrenError

from queues.runner.dispatch import Dispatcher
from queues.runner.job_loop.cancels import Cancels
from queues.runner.job_loop.drain import abandon_at
from queues.runner.json_logs import log_event
from queues.runner.postgres.connection import WorkerConnection
from queues.runner.postgres.dead_letter import dead_letter_id, fail_finally
from queues.runner.registry import HandlerSpec


async def _no_processor(job: Job, token: str) -> None:  # processJob below runs the handler
    raise NotImplementedError


def now_ms() -> int:
    return int(time.time() * 1000)


def since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


class PostgresRunnerWorker(Cancels, Worker):  # type: ignore[misc]
    limitUntil: int  # the package's: the limiter's time left (ms) after a fetch found none

    def __init__(
        self,
        spec: HandlerSpec,
        dispatch: Dispatcher,
        *,
        connection: WorkerConnection,
        name: str,
        dead_letters: Queue | None,
    ) -> None:
        opts = {**spec.options.worker_options(), "backend": "postgres", "name": name}
        opts["schema"] = connection.schema
        super().__init__(spec.queue, _no_processor, opts)
        # BullMQ's backend on this worker's own (checked) connection; the one the package made
        # from the options is never opened.
        self.backend = PostgresBackend(spec.queue, connection, owns_connection=True)
        self.connection = connection
        self.spec = spec
        self.dispatch = dispatch
        self.dead_letters = dead_letters if spec.options.dead_letter else None
        self.draining = False
        self._abandoning = False
        self._slots: set[asyncio.Future[Any]] = set()
        self._run_task: asyncio.Future[Any] | None = None
        self._stopping = asyncio.Event()
        self._handlers: dict[str, tuple[asyncio.Task[Any], Job]] = {}
        self._cancelled_jobs: weakref.WeakSet[Job] = weakref.WeakSet()
        self._cancels: dict[str, tuple[str, bool]] = {}
        self.on("stalled", self._on_stalled)
        self.on("error", self._on_error)

    async def start(self) -> None:
        await self.connection.wait_until_ready()  # a missing or foreign schema: said at once
        self._run_task = asyncio.ensure_future(self.run())

    async def shut(self) -> None:
        self._stopping.set()
        await self.close()
        if self._run_task is not None:
            await asyncio.gather(self._run_task, return_exceptions=True)

    # ------------------------------------------------------------------ processing

    async def getNextJob(self, token: str) -> Job | None:
        if self.limitUntil > 0:
            # Rate-limited (the backend reports the limiter's time left): the package would ask
            # again at once, so wait that time, or until the drain begins.
            wait_s, self.limitUntil = self.limitUntil / 1000, 0
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), wait_s)
            if self.draining:
                return None
        job = await super().getNextJob(token)
        if job is not None and self.draining:
            # Fetched as the drain began: this worker holds its lock, so it runs here.
            await self.processJob(job, token)
            return None
        return job  # type: ignore[no-any-return]

    def _apply_defaults(self, job: Job) -> None:
        opts = job.opts
        defaults = self.spec.options
        if not opts.get("attempts"):
            opts["attempts"] = job.attempts = defaults.attempts
        if not opts.get("backoff") and defaults.backoff_ms:
            opts["backoff"] = {"type": "exponential", "delay": defaults.backoff_ms}
        opts.setdefault("removeOnComplete", self.opts["removeOnComplete"])
        opts.setdefault("removeOnFail", self.opts["removeOnFail"])

    async def processJob(self, job: Job, token: str) -> None:
        """Run ``job``, then the jobs fetched with each completion, until none is fetched."""
        task = asyncio.current_task()
        if task is not None:
            self._slots.add(task)
        try:
            current: Job | None = job
            while current is not None:
                current = await self._run_one(current, token)
                if current is not None:
                    self.emit("active", current, "waiting")
        finally:
            if task is not None:
                self._slots.discard(task)

    async def _run_one(self, job: Job, token: str) -> Job | None:
        self._apply_defaults(job)
        self.jobs.add((job, token))
        self.lockManager.track_job(job.id, token, now_ms())
        fields = {
            "queue": self.name,
            "job_id": str(job.id),
            "name": job.name,
            "attempt": int(job.attemptsMade) + 1,
        }
        log_event("active", **fields)
        started = time.perf_counter()
        try:
            try:
                if job.deferredFailure:
                    raise UnrecoverableError(job.deferredFailure)
                result = await self._handle(job)
            except (DelayedError, WaitingChildrenError):
                return None  # the handler moved the job itself
            except Exception as error:
                await self._failed(job, token, error, started, fields)
                return None
            return await self._completed(job, token, result, started, fields)
        except asyncio.CancelledError:
            if not self._abandoning:
                raise  # the drain's deadline: the job stays active, for stall recovery
            return None
        finally:
            self.jobs.discard((job, token))
            self.lockManager.untrack_job(job.id)
            self._cancels.pop(str(job.id), None)

    async def _completed(
        self, job: Job, token: str, result: Any, started: float, fields: dict[str, Any]
    ) -> Job | None:
        """Complete ``job``; the next job comes back with the same call (BullMQ's
        ``move_to_completed_fetch``), as Node's worker fetches it, unless the drain began."""
        try:
            moved = await self.backend.moveToCompleted(
                job, result, job.opts.get("removeOnComplete", False), token, not self.draining
            )
        except Exception as error:  # e.g. the lock was lost and another worker has the job
            log_event("error", error=f"{type(error).__name__}: {error}", **fields)
            return None
        job.returnvalue = result
        job.attemptsMade += 1
        job.finishedOn = moved["finishedOn"]
        log_event("completed", duration_ms=since(started), **fields)
        self.emit("completed", job, result)
        fetched = moved["result"]
        if not fetched:
            return None
        return await self.nextJobFromJobData(*fetched, token)  # type: ignore[no-any-return]

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
    ) -> None:
        final = self._is_final(job, error)
        try:
            if final:
                await fail_finally(self, self.dead_letters, job, token, error)
            else:
                # BullMQ's own path: backoff, then delayed (or straight back to waiting).
                await job.moveToFailed(error, token)
        except Exception as failure:
            log_event("error", error=f"{type(failure).__name__}: {failure}", **fields)
            return
        extra: dict[str, Any] = {"final": final, "error": str(error) or type(error).__name__}
        if not final:
            extra["retry_in_ms"] = int(job.delay or 0)
        log_event("failed", duration_ms=since(started), **fields, **extra)
        if final and self.dead_letters is not None:
            log_event(
                "dead-lettered",
                dead_letter_queue=self.dead_letters.name,
                dead_letter_id=dead_letter_id(self.name, str(job.id)),
                **fields,
            )
        self.emit("failed", job, error)

    # ------------------------------------------------------------------ drain

    def _busy(self) -> set[asyncio.Future[Any]]:
        return {task for task in (*self.processing, *self._slots) if not task.done()}

    async def drain(self, deadline: float, force: asyncio.Event | None = None) -> list[str]:
        """Stop taking jobs; wait for in-flight ones until ``deadline`` (loop time) or
        ``force``. Returns the ids of the jobs abandoned then (they stay active)."""
        self.draining = True
        self._stopping.set()
        await self.pause(True)  # the run loop takes no more jobs; the LISTEN wait ends
        return await abandon_at(self, deadline, force)

    # ------------------------------------------------------------------ events

    def _on_stalled(self, job_id: str, *_: Any) -> None:
        log_event("stalled", queue=self.name, job_id=str(job_id))

    def _on_error(self, error: BaseException, *_: Any) -> None:
        if not self.closing:
            log_event("error", queue=self.name, error=f"{type(error).__name__}: {error}")
