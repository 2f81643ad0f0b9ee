"""The runner's worker: a bullmq ``Worker`` for one queue, with the job loop of a production
deployment.

What it changes in the Python package's worker:

- **Fetch-next.** Finishing a job fetches the next one in the same script call (as Node does),
  half the round trips per job; with the connections of clients/redis_clients.py this brings
  the runner level with a Node worker from concurrency 5 up (bench/RESULTS.md).
- **The limiter waits the limiter's time** (limiter.py), not the 5 s drain delay.
- **Runner defaults for foreign jobs**: attempts, exponential backoff and retention for jobs
  added without them (e.g. by a Node service).
- **Dead letters**: the final failure and the dead-letter copy are one transaction
  (dead_letter.py); earlier failures are retries, logged as such.
- **Per-tenant fairness** (fairness.py): a job over its tenant's rate is moved to ``delayed``
  for its reserved slot without spending an attempt.
- **Cancel** (job_loop/cancels.py): ``cancelJob`` ends a running handler (an async one is
  cancelled, a plain function's ``ctx.cancelled`` turns true) and fails the job with the reason
  given; cancel requests from the dashboard reach it through cancel_listener.py.
- **Drain** (shutdown.py): stop taking jobs, let in-flight ones finish (lock renewal keeps
  running; the package's own ``close()`` stops renewing while jobs still run), then abandon what
  is left at the deadline: such jobs stay active and are recovered as stalled by another worker.
  The ``abandoned`` log lines name them, and the jobs whose end could not be recorded earlier.
- **Redis restarts** (settle.py): a job whose handler finished while Redis was away is
  completed (or failed, or deferred) when Redis is back, as long as its lock lasts, instead of
  being left active for another worker to run a second time.
- **A JSON log line per job event** (json_logs.py).
- **Less Python per job**: jobs are built (jobs.py) and completed (finish.py) as bullmq does
  it, without its per-job rebuilding of constant keys and options.

The loop's parts are in job_loop/: fetching (fetch_next.py), a job's end (job_end.py), the
drain (drain.py) and cancels (cancels.py); this module composes them with the lifecycle and the
running of one job.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any

from bullmq import Job, Queue
from bullmq.custom_errors import DelayedError, UnrecoverableError, WaitingChildrenError
from redis.exceptions import NoPermissionError

from queues.redis.restricted import forget_client_name, learn_redis_version
from queues.runner.dispatch import Deferred, Dispatcher
from queues.runner.finish import Completer
from queues.runner.job_loop.cancels import Cancels
from queues.runner.job_loop.drain import Drain
from queues.runner.job_loop.fetch_next import now_ms
from queues.runner.json_logs import log_event
from queues.runner.registry import HandlerSpec


async def _no_processor(job: Job, token: str) -> None:  # processJob below runs the handler
    raise NotImplementedError


class RunnerWorker(Cancels, Drain):
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
        self._lock_until: dict[str, float] = {}
        self._handlers: dict[str, tuple[asyncio.Task[Any], Job]] = {}
        self._cancelled_jobs: weakref.WeakSet[Job] = weakref.WeakSet()
        self._cancels: dict[str, tuple[str, bool]] = {}
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

    async def shut(self) -> None:
        """Close the worker and its connection (after :meth:`drain`)."""
        await self.close()
        if self._run_task is not None:
            await asyncio.gather(self._run_task, return_exceptions=True)

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
        self.lockManager.track_job(job.id, token, now_ms())
        self._lock_until[str(job.id)] = self._lock_expiry()
        fields = self._fields(job)
        log_event("active", **fields)
        started = time.perf_counter()
        try:
            try:
                if job.deferredFailure:
                    raise UnrecoverableError(job.deferredFailure)
                result = await self._handle(job)
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
            self._cancels.pop(str(job.id), None)

    # ------------------------------------------------------------------ events

    def _on_stalled(self, job_id: str, *_: Any) -> None:
        log_event("stalled", queue=self.name, job_id=str(job_id))

    def _on_error(self, error: BaseException, *_: Any) -> None:
        if not self.closing:
            log_event("error", queue=self.name, error=f"{type(error).__name__}: {error}")
