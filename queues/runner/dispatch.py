"""Running one job's handler: the per-tenant check, then the function, on the event loop
(``async def``) or in the runner's thread pool (plain functions).

A queue's ``timeout`` bounds each attempt: past it the attempt fails with :class:`TimedOut`, and
the job's attempts and backoff decide what follows, as for any failure. An ``async def`` handler
is cancelled there. A plain function cannot be stopped from outside its thread: its attempt
fails all the same, but the function runs on, holding one of the pool's threads until it
returns (what it returns then is dropped), and a retry may start while it still runs.
"""

from __future__ import annotations

import asyncio
import functools
import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bullmq import Job

from queues.runner.context import JobContext, SyncJobContext
from queues.runner.fairness import TenantGate
from queues.runner.registry import HandlerSpec


class Deferred(Exception):
    """The job's tenant is over its rate: run it again in ``wait_ms``."""

    def __init__(self, tenant: str, wait_ms: int) -> None:
        super().__init__(f"tenant {tenant!r} over its rate; deferred {wait_ms} ms")
        self.tenant = tenant
        self.wait_ms = wait_ms


class TimedOut(Exception):
    """The attempt ran longer than its queue's ``timeout``."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"timed out after {timeout_s:g} s (the queue's timeout)")
        self.timeout_s = timeout_s


class NotJSONError(TypeError):
    """A handler returned something BullMQ cannot store as a return value."""


class Dispatcher:
    def __init__(
        self, spec: HandlerSpec, executor: ThreadPoolExecutor, gate: TenantGate | None = None
    ) -> None:
        self.spec = spec
        self.executor = executor
        self.gate = gate

    async def __call__(self, job: Job) -> Any:
        if self.gate is not None:
            tenant = self.gate.tenant_of(job.data)
            if tenant is not None:
                wait = await self.gate.wait_ms(tenant, str(job.id))
                if wait > 0:
                    raise Deferred(tenant, wait)
        timeout = self.spec.options.timeout
        if timeout is None:
            result = await self._run(job)
        else:
            limit = asyncio.timeout(timeout)
            try:
                async with limit:
                    result = await self._run(job)
            except TimeoutError as error:
                if not limit.expired():
                    raise  # the handler's own timeout, not the queue's
                raise TimedOut(timeout) from error
        if result is not None and not isinstance(result, str | int | bool):
            try:
                json.dumps(result, allow_nan=False)
            except (TypeError, ValueError) as error:
                message = f"{self.spec.path} returned a value that is not JSON: {error}"
                raise NotJSONError(message) from error
        return result

    async def _run(self, job: Job) -> Any:
        spec = self.spec
        if spec.is_async:
            if spec.wants_context:
                return await spec.func(job.data, _context(spec, job))
            return await spec.func(job.data)
        loop = asyncio.get_running_loop()
        args = (
            (job.data, SyncJobContext(_context(spec, job), loop))
            if spec.wants_context
            else (job.data,)
        )
        # Cancelling the wait (the timeout) leaves a running function running: see above.
        return await loop.run_in_executor(self.executor, functools.partial(spec.func, *args))


def _context(spec: HandlerSpec, job: Job) -> JobContext:
    # Built only for handlers that take a context: the others would pay for it on every job.
    return JobContext(
        queue=spec.queue,
        job_id=str(job.id),
        name=str(job.name),
        attempt=int(job.attemptsMade) + 1,
        max_attempts=int(job.opts.get("attempts") or 1),
        job=job,
    )
