"""The runner's worker: a bullmq ``Worker`` for one queue, with the job loop of a production
deployment.

What it changes in the Python package's worker:

- **Fetch-next.** Finishing a job fetches the next one in the same script call (as Node does),
  half the round trips per job; with the connections of redis_client.py this brings the runner
  level with a Node worker from concurrency 5 up (bench/RESULTS.md).
- **The limiter waits the limiter's time** (limiter.py), not the 5 s drain delay.
- **Runner defaults for foreign jobs**: attempts, exponential backoff and retention for jobs
  added without them (e.g. by a Node service).
- **Dead letters**: the final failure and the dead-letter copy are one transaction
  (dead_letter.py); earlier failures are retries, logged as such.
- **Per-tenant fairness** (fairness.py): a job over its tenant's rate is moved to ``delayed``
  for its reserved slot without spending an attempt.
- **Drain** (shutdown.py): stop taking jobs, let in-flight ones finish (lock renewal keeps
  running; the package's own ``close()`` stops renewing while jobs still run), then abandon what
  is left at the deadline: such jobs stay active and are recovered as stalled by another worker.
  The ``abandoned`` log lines name them, and the jobs whose end could not be recorded earlier.
- **Redis restarts** (settle.py): a job whose handler finished while Redis was away is
  completed (or failed, or deferred) when Redis is back, as long as its lock lasts, instead of
  being left active for another worker to run a second time.
- **A JSON log line per job event** (logs.py).
- **Less Python per job**: jobs are built (jobs.py) and completed (finish.py) as bullmq does
  it, without its per-job rebuilding of constant keys and options.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bullmq import Job, Queue, Worker
from bullmq.custom_errors import DelayedError, UnrecoverableError, WaitingChildrenError
from redis.exceptions import NoPermissionError

from queues.cancelling import cancel_and_wait
from queues.redis.restricted import forget_client_name, learn_redis_version
from queues.runner.dead_letter import dead_letter_id, fail_finally
from queues.runner.dispatch import Deferred, Dispatcher
from queues.runner.finish import Completer
from queues.runner.jobs import job_from_raw
from queues.runner.json_logs import log_event
from queues.runner.limiter import resume_at
from queues.runner.registry import HandlerSpec
from queues.runner.settle import AWAY, LandedEarlier, until_recorded

# States a job may be in once a finishing call landed (a removed job is "unknown").
COMPLETED = ("completed", "unknown")
FAILED = ("failed", "unknown")
RETRIED = ("delayed", "waiting", "prioritized", "paused")
DEFERRED = ("delayed",)
# Jobs remembered as left active (their end never reached Redis), for the shutdown's report.
MAX_LEFT_ACTIVE = 10_000


def _now_ms() -> int:
    return int(time.time() * 1000)


async def _no_processor(job: Job, token: str) -> None:  # processJob below runs the handler
    raise NotImplementedError


class RunnerWorker(Worker):  # type: ignore[misc]
    # The package's fetch state (set by bullmq's Worker), read and set below.
    drained: bool
    blockUntil: int
    limitUntil: int

    def __init__(
        self,
        spec: HandlerSpec,
        dispatch: Dispatcher,
        *,
        connection: Any,
        prefix: str,
        name: str,
        dead_letters: Queue | None,
        dead_letter_queue: str | None = None,
    ) -> None:
        opts = {**spec.options.worker_options(), "connection": connection, "prefix": prefix}
        opts["name"] = name
        super().__init__(spec.queue, _no_processor, opts)
        self.spec = spec
        self.dispatch = dispatch
        self.dead_letters = dead_letters if spec.options.dead_letter else None
        self.dead_letter_queue = dead_letter_queue
        self.draining = False
        self._abandoning = False
        self._slots: set[asyncio.Future[Any]] = set()
        self._run_task: asyncio.Future[Any] | None = None
        self.completer = Completer(self.scripts)
        # Loop time until which each running job's lock holds (taken, then renewed).
        self._lock_until: dict[str, float] = {}
        # Jobs whose end could not be recorded: active in Redis until another worker takes
        # them over as stalled (dict: ordered, oldest dropped first).
        self.left_active: dict[str, None] = {}
        self.on("stalled", self._on_stalled)
        self.on("error", self._on_error)
        self.on("locksRenewed", self._on_locks_renewed)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        # The package assumes an old Redis until asked: whole-second blocking waits, which
        # would cut a 100 ms limiter window to 1 s.
        await learn_redis_version(self.backend.connection)
        if self.backend.blocking_connection is not None:
            await learn_redis_version(self.backend.blocking_connection)
        await self._ensure_client_names()  # `bull:<queue>:w:<name>`, for workers lists
        self._run_task = asyncio.ensure_future(self.run())

    async def _ensure_client_names(self) -> None:
        try:
            await super()._ensure_client_names()
        except NoPermissionError:
            # A Redis user without CLIENT: the worker runs, unnamed (restricted_redis.py).
            forget_client_name(self.backend.connection)
            if self.backend.blocking_connection is not None:
                forget_client_name(self.backend.blocking_connection)
            self._client_name_set = True

    def _busy(self) -> set[asyncio.Future[Any]]:
        return {task for task in (*self.processing, *self._slots) if not task.done()}

    async def drain(self, deadline: float, force: asyncio.Event | None = None) -> list[str]:
        """Stop taking jobs and wait for in-flight ones until ``deadline`` (loop time) or
        ``force``. Returns the ids of jobs abandoned then (they stay active in Redis).
        """
        loop = asyncio.get_running_loop()
        self.draining = True  # no fetch-next from now on
        await self.pause(True)  # the run loop takes no more jobs; the blocking wait ends
        forced = asyncio.ensure_future(force.wait()) if force is not None else None
        busy = self._busy()
        try:
            while busy and not (force is not None and force.is_set()):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                waits = {*busy, forced} if forced is not None else busy
                await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
                busy = self._busy()
        finally:
            if forced is not None:
                forced.cancel()
        abandoned: list[str] = []
        if busy:
            abandoned = [str(job.id) for job, _token in list(self.jobs)]
            self._abandoning = True
            self.forceClosing = True
            await cancel_and_wait(*busy)
        for job_id in abandoned:
            log_event("abandoned", queue=self.name, job_id=job_id, why="running at the deadline")
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

    async def shut(self) -> None:
        """Close the worker and its connection (after :meth:`drain`)."""
        await self.close()
        if self._run_task is not None:
            await asyncio.gather(self._run_task, return_exceptions=True)

    # ------------------------------------------------------------------ fetching

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
                self.blockUntil = resume_at(_now_ms(), int(limit_until))
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

    # ------------------------------------------------------------------ processing

    async def processJob(self, job: Job, token: str) -> None:
        """Run ``job``, then the jobs fetched with each finish, until none is fetched."""
        task = asyncio.current_task()
        if task is not None:
            self._slots.add(task)
        try:
            current: Job | None = job
            while current is not None:
                current = await self._run_one(current, token)
                if current is not None:
                    self.emit("active", current, "waiting")
        except asyncio.CancelledError:
            if self._abandoning:
                return None  # the drain's deadline: the job stays active, for stall recovery
            raise
        finally:
            if task is not None:
                self._slots.discard(task)
        return None

    def _apply_defaults(self, job: Job) -> None:
        opts = job.opts
        defaults = self.spec.options
        if not opts.get("attempts"):
            opts["attempts"] = job.attempts = defaults.attempts
        if not opts.get("backoff") and defaults.backoff_ms:
            opts["backoff"] = {"type": "exponential", "delay": defaults.backoff_ms}
        opts.setdefault("removeOnComplete", self.opts["removeOnComplete"])
        opts.setdefault("removeOnFail", self.opts["removeOnFail"])

    def _fields(self, job: Job) -> dict[str, Any]:
        return {
            "queue": self.name,
            "job_id": str(job.id),
            "name": job.name,
            "attempt": int(job.attemptsMade) + 1,
        }

    async def _run_one(self, job: Job, token: str) -> Job | None:
        self._apply_defaults(job)
        self.jobs.add((job, token))
        self.lockManager.track_job(job.id, token, _now_ms())
        self._lock_until[str(job.id)] = self._lock_expiry()
        fields = self._fields(job)
        log_event("active", **fields)
        started = time.perf_counter()
        try:
            try:
                if job.deferredFailure:
                    raise UnrecoverableError(job.deferredFailure)
                result = await self.dispatch(job)
            except Deferred as deferral:
                return await self._defer(job, token, deferral, fields)
            except (DelayedError, WaitingChildrenError):
                return None  # the handler moved the job itself
            except Exception as error:
                return await self._failed(job, token, error, started, fields)
            return await self._completed(job, token, result, started, fields)
        finally:
            self.jobs.discard((job, token))
            self.lockManager.untrack_job(job.id)
            self._lock_until.pop(str(job.id), None)

    # ------------------------------------------------------------------ finishing

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
        moved = moved or {"result": None, "finishedOn": _now_ms()}
        job.returnvalue = result
        job.attemptsMade += 1
        job.finishedOn = moved["finishedOn"]
        log_event("completed", duration_ms=_since(started), **fields)
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
        log_event("failed", duration_ms=_since(started), **fields, **extra)
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
                    _now_ms(),
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

    # ------------------------------------------------------------------ events

    def _report(self, error: BaseException, fields: dict[str, Any]) -> None:
        log_event("error", error=f"{type(error).__name__}: {error}", **fields)

    def _on_stalled(self, job_id: str, *_: Any) -> None:
        log_event("stalled", queue=self.name, job_id=str(job_id))

    def _on_error(self, error: BaseException, *_: Any) -> None:
        if not self.closing:
            log_event("error", queue=self.name, error=f"{type(error).__name__}: {error}")


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
