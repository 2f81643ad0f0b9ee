"""Hearing cancel requests: the runner subscribes to the cancel channel of each queue it works
(queues/actions/cancel_requests.py) and hands each request to that queue's worker, which
cancels the job if it runs it (cancels.py); the other processes' workers ignore it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.exceptions import NoPermissionError, RedisError

from queues.actions.cancel_requests import CancelRequest, decode
from queues.cancelling import cancel_and_wait, raise_if_cancelled
from queues.redis.cluster import is_cluster
from queues.runner.json_logs import log_event

# How long start() waits for Redis to confirm the subscriptions, and the pause after a
# broken connection before listening again (redis-py subscribes again as it reconnects).
CONFIRM_S = 10.0
AFTER_ERROR_S = 1.0


class CancelsJobs(Protocol):
    name: str

    def cancelJob(self, job_id: str, reason: str | None = None, retry: bool = False) -> bool: ...


class CancelListener:
    def __init__(self, client: aioredis.Redis, workers: Mapping[str, CancelsJobs]) -> None:
        """``workers``: the worker of each cancel channel."""
        self.client = client
        self.workers = dict(workers)
        self._pubsub: Any = None
        self._task: asyncio.Future[None] | None = None

    async def start(self) -> None:
        """Subscribe, and return once Redis confirmed it: a request sent after this is heard."""
        if not self.workers:
            return
        if is_cluster(self.client):
            # A Cluster client learns its slots on its first command; its pubsub picks the
            # node of the first channel's slot from them (a message reaches every node).
            await self.client.initialize()  # type: ignore[attr-defined]
        self._pubsub = self.client.pubsub()
        try:
            await self._pubsub.subscribe(*self.workers)
        except NoPermissionError as error:
            # A Redis user without channels (ACL ``&*``): the workers run, deaf to Cancel.
            log_event("error", error=f"cancel requests will not be heard: {error}")
            return
        confirmed = 0
        deadline = time.monotonic() + CONFIRM_S
        while confirmed < len(self.workers) and time.monotonic() < deadline:
            message = await self._pubsub.get_message(timeout=deadline - time.monotonic())
            if message is not None and message.get("type") == "subscribe":
                confirmed += 1
        self._task = asyncio.ensure_future(self._listen())

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        if self._pubsub is not None:
            await self._pubsub.aclose()
        await self.client.aclose()

    async def _listen(self) -> None:
        while True:
            raise_if_cancelled()
            try:
                message = await self._pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=None
                )
            except (RedisError, OSError) as error:
                log_event("error", error=f"cancel requests: {type(error).__name__}: {error}")
                await asyncio.sleep(AFTER_ERROR_S)
                continue
            if message is not None and message.get("type") == "message":
                self.hear(str(message["channel"]), message["data"])

    def hear(self, channel: str, data: str | bytes) -> bool:
        """Hand the request to its queue's worker; True when that worker cancelled the job."""
        worker = self.workers.get(channel)
        request = decode(data)
        if worker is None or request is None:
            return False
        return hand_over(worker, request)


def hand_over(worker: CancelsJobs, request: CancelRequest) -> bool:
    """Ask ``worker`` to cancel the request's job; True when it ran it and cancelled it."""
    if request.expired(int(time.time() * 1000)):
        # The dashboard has already answered that nobody cancelled the job.
        log_event("cancel-expired", queue=worker.name, job_id=request.job_id, by=request.by)
        return False
    return worker.cancelJob(request.job_id, request.reason, request.retry)
