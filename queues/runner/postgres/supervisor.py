"""The runner on a Postgres store (``manage.py runqueueworker --connection pg``): one worker per
registered queue, each on a connection of its own (BullMQ's Postgres worker holds one for its
statements and one for its LISTEN wait), their schedulers, and the same orderly stop as on
Redis (shutdown.py): drain against one deadline, then close.

The dashboard's *Cancel* reaches these workers through the store itself (cancel_listener.py).
What does not apply there, and is refused or left out: per-tenant fairness (its counters are
Redis keys) and the finishing of jobs while the store is away (it uses Redis scripts).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from bullmq import Queue
from bullmq.backends.postgres_backend import PostgresBackend

from queues.postgres.urls import parse_postgres_url
from queues.redis import connections
from queues.runner.dispatch import Dispatcher
from queues.runner.errors import RunnerConfigError
from queues.runner.json_logs import log_event
from queues.runner.postgres.cancel_listener import PostgresCancelListener
from queues.runner.postgres.connection import WorkerConnection
from queues.runner.postgres.dead_letter import dead_letter_queue
from queues.runner.postgres.worker import PostgresRunnerWorker
from queues.runner.registry import Registry
from queues.runner.schedules import register_schedules
from queues.runner.supervisor import WorkerRunner


class PostgresWorkerRunner(WorkerRunner):
    def __init__(
        self,
        registry: Registry,
        queues: Sequence[str] = (),
        *,
        shutdown_timeout: float | None = None,
        name: str | None = None,
        connection: str,
        max_memory_mb: float | None = None,
    ) -> None:
        super().__init__(
            registry,
            queues,
            shutdown_timeout=shutdown_timeout,
            name=name,
            connection=connection,
            max_memory_mb=max_memory_mb,
        )
        fair = [spec.queue for spec in self.specs if spec.options.per_tenant is not None]
        if fair:
            raise RunnerConfigError(
                f"{connection!r} is a PostgreSQL store: per-tenant fairness keeps its counters "
                f"in Redis and is not available there (queues {', '.join(fair)})"
            )
        self.url = parse_postgres_url(connections.url_of(connection))
        self.pg_workers: list[PostgresRunnerWorker] = []
        self._shared: WorkerConnection | None = None
        self._pg_cancel_listener: PostgresCancelListener | None = None

    async def start(self) -> None:
        # The shared connection registers schedulers; it checks the schema before anything.
        shared = self._shared = WorkerConnection(self.url)
        await shared.wait_until_ready()
        sync_slots = sum(spec.options.concurrency for spec in self.specs if not spec.is_async)
        self._executor = ThreadPoolExecutor(max(1, sync_slots), thread_name_prefix="bullpen-job")
        for spec in self.specs:
            queue = Queue(spec.queue, {"backend": "postgres", "schema": shared.schema})
            queue.backend = PostgresBackend(spec.queue, shared, owns_connection=False)
            self.queues.append(queue)
            await register_schedules(queue, spec.schedules, spec.options.job_options())
            own = WorkerConnection(self.url)
            worker = PostgresRunnerWorker(
                spec,
                Dispatcher(spec, self._executor),
                connection=own,
                name=self.name,
                dead_letters=dead_letter_queue(self.dead_letter.name, own),
            )
            self.pg_workers.append(worker)
            await worker.start()
        # The dashboard's Cancel reaches a job through the store, whichever process runs it.
        self._pg_cancel_listener = PostgresCancelListener(
            self.url, {worker.name: worker for worker in self.pg_workers}
        )
        await self._pg_cancel_listener.start()
        log_event(
            "started",
            worker=self.name,
            connection=self.connection,
            queues={spec.queue: spec.path for spec in self.specs},
        )

    async def stop(
        self, grace_s: float | None = None, force: asyncio.Event | None = None
    ) -> list[str]:
        """Drain, then close workers, queues and connections. Returns abandoned job ids."""
        grace_s = self.shutdown_timeout if grace_s is None else grace_s
        log_event("draining", worker=self.name, timeout_s=grace_s)
        deadline = asyncio.get_running_loop().time() + grace_s
        drained = await asyncio.gather(*(each.drain(deadline, force) for each in self.pg_workers))
        abandoned = [job_id for ids in drained for job_id in ids]
        if self._pg_cancel_listener is not None:
            await self._pg_cancel_listener.stop()
        await asyncio.gather(*(each.shut() for each in self.pg_workers))
        for queue in self.queues:
            await queue.close()
        if self._shared is not None:
            await self._shared.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        log_event("stopped", worker=self.name, abandoned=len(abandoned))
        return abandoned
