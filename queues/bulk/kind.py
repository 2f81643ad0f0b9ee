"""What every kind of bulk action provides, and what it is given while it runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from queues.bulk.counted import Build, CancelRequested, LostAction, counted_batch
from queues.bulk.record import ActionRecord
from queues.bulk.settings import BulkSettings
from queues.bulk.store import ActionStore
from queues.reads.keys import QueueRef

ProgressReporter = Callable[[ActionRecord], Awaitable[None]]


@dataclass
class Prepared:
    """A request that passed validation: its parameters as kept, and what it will act on."""

    params: dict[str, Any]
    total: int
    job_ids: list[str] | None = None  # list kinds: the jobs, fixed when it is asked for


class Kind(Protocol):
    name: str

    async def prepare(self, ref: QueueRef, params: dict[str, Any], anchor_ms: int) -> Prepared:
        """Validate (raising BadParameter) before anything is recorded."""
        ...

    async def run(self, work: Work) -> None:
        """Act until done, resuming from the record's progress; CancelRequested or
        LostAction end it early."""
        ...


class Work:
    """One action being executed by the runner that owns it."""

    PROGRESS_EVERY = 0.2  # seconds between progress reports

    def __init__(
        self,
        record: ActionRecord,
        store: ActionStore,
        owner: str,
        settings: BulkSettings,
        on_progress: ProgressReporter,
    ) -> None:
        self.record = record
        self.store = store
        self.owner = owner
        self.settings = settings
        self._on_progress = on_progress
        self._reported_at = 0.0
        # Taken over after its runner stopped (a crash, a lost lease, Redis away).
        self.resumed = False

    @property
    def ref(self) -> QueueRef:
        return self.record.ref

    @property
    def record_key(self) -> str:
        return self.store.key(self.record.id)

    async def counted(self, build: Build, count_at: int) -> Any:
        return await counted_batch(self.store.redis, self.record_key, self.owner, build, count_at)

    async def check(self) -> None:
        """Still ours and not cancelled (before acting on anything)."""
        owner, cancel = await self.store.redis.hmget(self.record_key, ["owner", "cancel"])
        if owner != self.owner:
            raise LostAction
        if cancel:
            raise CancelRequested

    async def progress(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._reported_at >= self.PROGRESS_EVERY:
            self._reported_at = now
            await self._on_progress(self.record)

    async def between_batches(self) -> None:
        if self.settings.pause_ms > 0:
            await asyncio.sleep(self.settings.pause_ms / 1000)
        else:
            await asyncio.sleep(0)  # let requests in between batches
