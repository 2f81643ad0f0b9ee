"""The runner: one worker per registered queue, their schedulers, and an orderly stop.

    runner = WorkerRunner(registry)     # every registered queue; or WorkerRunner(r, ["email"])
    await runner.start()
    ...
    abandoned = await runner.stop()            # drain, then close workers, queues, connection

``manage.py runqueueworker`` runs one until SIGTERM/SIGINT (shutdown.py), or until its memory
passes ``max_memory_mb`` (memory.py).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import redis.asyncio as aioredis
from bullmq import Queue

from queues.actions.cancel_requests import channel
from queues.cancelling import cancel_and_wait
from queues.config.settings import default_prefix
from queues.reads.dead_letters import dead_letter_ref
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.redis.connections import own_key_prefix
from queues.runner.clients.queue_handles import bullmq_queue
from queues.runner.clients.redis_clients import runner_client
from queues.runner.dispatch import Dispatcher
from queues.runner.errors import RunnerConfigError
from queues.runner.fairness import TenantGate
from queues.runner.job_loop.cancel_listener import CancelListener
from queues.runner.json_logs import log_event
from queues.runner.memory import watch as watch_memory
from queues.runner.registry import HandlerSpec, Registry
from queues.runner.schedules import register_schedules
from queues.runner.settings import worker_config
from queues.runner.shutdown import StopSignals, close_workers, drain_workers
from queues.runner.worker import RunnerWorker


def default_worker_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class WorkerRunner:
    def __init__(
        self,
        registry: Registry,
        queues: Sequence[str] = (),
        *,
        shutdown_timeout: float | None = None,
        name: str | None = None,
        connection: str | None = None,
        max_memory_mb: float | None = None,
    ) -> None:
        """``connection``: the Redis whose queues to work (None: the default one);
        ``max_memory_mb``: the memory ceiling (None: the ``max_memory_mb`` setting)."""
        self.specs: list[HandlerSpec] = [registry.get(q) for q in queues] or list(registry)
        if not self.specs:
            raise RunnerConfigError(
                'No job handlers registered: list their modules in BULLPEN["WORKER"]["modules"] '
                "or pass --module"
            )
        self.connection = connection or connections.default_name()
        self.dead_letter = dead_letter_ref(self.connection)
        if any(spec.queue == self.dead_letter.name for spec in self.specs):
            raise RunnerConfigError(
                f"{self.dead_letter.name!r} is the dead-letter queue: nothing may consume it"
            )
        config_timeout = float(worker_config()["shutdown_timeout"])
        self.shutdown_timeout = config_timeout if shutdown_timeout is None else shutdown_timeout
        ceiling = worker_config()["max_memory_mb"] if max_memory_mb is None else max_memory_mb
        if ceiling is not None and (
            isinstance(ceiling, bool) or not isinstance(ceiling, int | float) or ceiling <= 0
        ):
            raise RunnerConfigError(f"max_memory_mb must be a number above 0, not {ceiling!r}")
        self.max_memory_mb: float | None = ceiling
        self.over_memory = False  # stopped because the memory passed max_memory_mb
        self.name = name or default_worker_name()
        self.prefix = default_prefix()
        self.workers: list[RunnerWorker] = []
        self.queues: list[Queue] = []
        self._client: aioredis.Redis | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._cancel_listener: CancelListener | None = None

    async def start(self) -> None:
        # The process's shared client: producers' queues, the dead-letter queue, schedulers,
        # fairness. Each worker gets its own (blocking) client below.
        client = self._client = runner_client(blocking=False, connection=self.connection)
        sync_slots = sum(spec.options.concurrency for spec in self.specs if not spec.is_async)
        self._executor = ThreadPoolExecutor(max(1, sync_slots), thread_name_prefix="bullpen-job")
        dead_letters = bullmq_queue(client, self.dead_letter)
        self.queues.append(dead_letters)
        key_prefix = own_key_prefix(self.connection)
        for spec in self.specs:
            ref = QueueRef(self.prefix, spec.queue, self.connection)
            queue = bullmq_queue(client, ref)
            self.queues.append(queue)
            await register_schedules(queue, spec.schedules, spec.options.job_options())
            limit = spec.options.per_tenant
            gate = TenantGate(client, ref, limit, key_prefix) if limit is not None else None
            worker = RunnerWorker(
                spec,
                Dispatcher(spec, self._executor, gate),
                connection=runner_client(blocking=True, connection=self.connection),
                prefix=self.prefix,
                name=self.name,
                dead_letters=dead_letters,
                dead_letter_queue=self.dead_letter.name,
            )
            self.workers.append(worker)
            await worker.start()
        # The dashboard's Cancel reaches a job through its queue's channel, whichever process
        # runs it.
        self._cancel_listener = CancelListener(
            runner_client(blocking=True, connection=self.connection),
            {
                channel(QueueRef(self.prefix, worker.name, self.connection)): worker
                for worker in self.workers
            },
        )
        await self._cancel_listener.start()
        log_event(
            "started",
            worker=self.name,
            prefix=self.prefix,
            queues={spec.queue: spec.path for spec in self.specs},
        )

    async def stop(
        self, grace_s: float | None = None, force: asyncio.Event | None = None
    ) -> list[str]:
        """Drain, then close workers, queues and the connection. Returns abandoned job ids."""
        grace_s = self.shutdown_timeout if grace_s is None else grace_s
        log_event("draining", worker=self.name, timeout_s=grace_s)
        abandoned = await drain_workers(self.workers, grace_s, force)
        if self._cancel_listener is not None:
            await self._cancel_listener.stop()
        await close_workers(self.workers)
        for queue in self.queues:
            await queue.close()
        if self._client is not None:
            await self._client.aclose()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        log_event("stopped", worker=self.name, abandoned=len(abandoned))
        return abandoned

    async def run_until_signalled(self) -> list[str]:
        """Run until SIGTERM/SIGINT, or until the memory passes ``max_memory_mb``
        (``over_memory`` then says so); drain and stop either way."""
        signals = StopSignals()
        signals.install()
        over = asyncio.Event()
        waits: list[asyncio.Future[object]] = []
        try:
            await self.start()
            waits.append(asyncio.ensure_future(signals.stop.wait()))
            if self.max_memory_mb is not None:
                waits.append(asyncio.ensure_future(watch_memory(self.max_memory_mb, over)))
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            self.over_memory = over.is_set()
            await cancel_and_wait(*waits)
            return await self.stop(force=signals.force)
        finally:
            await cancel_and_wait(*waits)
            signals.uninstall()
