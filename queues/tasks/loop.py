"""The event loop the Tasks backend talks to Redis on.

BullMQ's Python package is async only and its queues are bound to the loop that made them,
while Django's Tasks API is called from plain views, threads and coroutines alike. So the
backend keeps one loop in a daemon thread per process, with one Redis client per connection on
it, and every call (``enqueue`` or ``aenqueue``, ``get_result``) is a coroutine sent there: no
connection per call, and the same behaviour from sync and async code. A forked process starts
its own; a change of ``BULLPEN`` closes the clients, made afresh on next use.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import redis.asyncio as aioredis
from bullmq import Queue

from queues.config.settings import on_change
from queues.reads.keys import QueueRef
from queues.runner.clients.queue_handles import bullmq_queue
from queues.runner.clients.redis_clients import runner_client

T = TypeVar("T")


class TasksLoop:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0
        self._clients: dict[str | None, aioredis.Redis] = {}
        self._queues: dict[QueueRef, Queue] = {}

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="bullpen-tasks", daemon=True).start()
                self._loop, self._pid, self._clients = loop, os.getpid(), {}
                self._queues = {}
            return self._loop

    def client(self, connection: str | None) -> aioredis.Redis:
        """The loop's client of ``connection`` (None: the default); call it on the loop."""
        client = self._clients.get(connection)
        if client is None:
            client = self._clients[connection] = runner_client(
                blocking=False, connection=connection
            )
        return client

    def queue(self, ref: QueueRef) -> Queue:
        """The loop's bullmq Queue of ``ref`` (made once: making one loads BullMQ's scripts)."""
        queue = self._queues.get(ref)
        if queue is None:
            queue = self._queues[ref] = bullmq_queue(self.client(ref.connection), ref)
        return queue

    def run(self, call: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``call`` on the loop and wait for it (from a thread that is not the loop's)."""
        future = asyncio.run_coroutine_threadsafe(call, self._running())
        return future.result(timeout)

    async def arun(self, call: Coroutine[Any, Any, T], limit_s: float) -> T:
        future = asyncio.run_coroutine_threadsafe(call, self._running())
        async with asyncio.timeout(limit_s):
            return await asyncio.wrap_future(future)

    def close_clients(self) -> None:
        with self._lock:
            loop, clients, self._clients = self._loop, self._clients, {}
            self._queues = {}
        if loop is None or not clients or self._pid != os.getpid() or not loop.is_running():
            return

        async def close() -> None:
            for client in clients.values():
                await client.aclose()

        asyncio.run_coroutine_threadsafe(close(), loop).result(5)


TASKS_LOOP = TasksLoop()


@on_change
def _forget_clients() -> None:
    TASKS_LOOP.close_clients()
