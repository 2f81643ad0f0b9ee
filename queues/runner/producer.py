"""Adding jobs the runner's way: each queue's job options (attempts, backoff, retention) as
defaults, idempotent ids when given, and an ``added`` log line.

    async with Producer() as producer:
        await producer.add("newsletter", "send", {"user": 42},
                           job_id=business_job_id("email", 42, "weekly", utc_day()))
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import redis.asyncio as aioredis
from bullmq import FlowProducer, Queue

from queues.config.settings import default_prefix
from queues.reads.keys import QueueRef
from queues.runner.clients.queue_handles import bullmq_queue
from queues.runner.clients.redis_clients import runner_client
from queues.runner.json_logs import log_event
from queues.runner.registry import Registry, default_registry


class Producer:
    def __init__(
        self,
        registry: Registry | None = None,
        *,
        client: aioredis.Redis | None = None,
        prefix: str | None = None,
    ) -> None:
        self.registry = registry if registry is not None else default_registry
        self._owns_client = client is None
        self.client = client if client is not None else runner_client(blocking=False)
        self.prefix = prefix or default_prefix()
        self._queues: dict[str, Queue] = {}

    def queue(self, name: str) -> Queue:
        queue = self._queues.get(name)
        if queue is None:
            queue = bullmq_queue(self.client, QueueRef(self.prefix, name))
            self._queues[name] = queue
        return queue

    def job_options(self, queue: str, **given: Any) -> dict[str, Any]:
        return {**self.registry.options_for(queue).job_options(), **given}

    async def add(
        self,
        queue: str,
        name: str,
        data: Any,
        *,
        job_id: str | None = None,
        delay_ms: int = 0,
        priority: int = 0,
        **opts: Any,
    ) -> str:
        """Add a job; with ``job_id`` a second add of the same id is a no-op. Returns the id."""
        options = self.job_options(queue, **opts)
        if job_id is not None:
            options["jobId"] = job_id
        if delay_ms:
            options["delay"] = delay_ms
        if priority:
            options["priority"] = priority
        job = await self.queue(queue).add(name, data, options)
        log_event("added", queue=queue, job_id=str(job.id), name=name)
        return str(job.id)

    async def add_flow(self, flow: dict[str, Any]) -> str:
        """Add a parent job and its children at once (BullMQ's ``FlowProducer``): ``flow`` is
        ``{"name", "queueName", "data", "children": [...]}`` as BullMQ takes it, and each job
        gets its queue's options under its own. Returns the parent's id."""
        producer = FlowProducer({"connection": self.client, "prefix": self.prefix})
        # The client is this producer's (or its owner's): the flow producer is never closed.
        tree = await producer.add(self._with_options(flow))
        root = tree["job"]
        log_event("added", queue=str(flow["queueName"]), job_id=str(root.id), name=root.name)
        return str(root.id)

    def _with_options(self, node: dict[str, Any]) -> dict[str, Any]:
        options = {**self.job_options(str(node["queueName"])), **(node.get("opts") or {})}
        children = [self._with_options(child) for child in node.get("children") or []]
        return {**node, "opts": options, **({"children": children} if children else {})}

    async def close(self) -> None:
        self._queues.clear()
        if self._owns_client:
            await self.client.aclose()

    async def __aenter__(self) -> Producer:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
