"""BullMQ's PostgreSQL store behind :class:`queues.reads.store.QueueStore`."""

from __future__ import annotations

from typing import Any

from queues.postgres import flow, job_reads, queue_reads
from queues.reads.counts import QueueSummary
from queues.reads.discovery import Discovered
from queues.reads.keys import QueueRef
from queues.reads.listing import JobPage
from queues.reads.workers import WorkerConnection


class PostgresStore:
    async def discover(self, connection: str) -> Discovered:
        return await queue_reads.discover(connection)

    async def exists(self, ref: QueueRef) -> bool:
        return await queue_reads.exists(ref)

    async def summaries(self, connection: str, refs: list[QueueRef]) -> list[QueueSummary]:
        return await queue_reads.summaries(connection, refs)

    async def job_page(
        self, ref: QueueRef, state: str, page: int, per_page: int, order: str
    ) -> JobPage:
        return await job_reads.job_page(ref, state, page, per_page, order)

    async def job_detail(
        self, ref: QueueRef, job_id: str, *, log_lines: int | None, cap: int | None
    ) -> dict[str, Any]:
        return await job_reads.job_detail(ref, job_id, log_lines=log_lines, cap=cap)

    async def job_rows(self, ref: QueueRef, job_ids: list[str], cap: int) -> list[dict[str, Any]]:
        return await job_reads.job_rows(ref, job_ids, cap)

    async def state_total(self, ref: QueueRef, state: str) -> int:
        return await job_reads.state_total(ref, state)

    async def state_sizes(self, refs: list[QueueRef], states: list[str]) -> list[dict[str, int]]:
        return await job_reads.state_sizes(refs, states)

    async def state_ids(self, ref: QueueRef, state: str, start: int, end: int) -> list[str]:
        return await job_reads.state_ids(ref, state, start, end)

    async def log_tails(
        self, ref: QueueRef, job_ids: list[str], lines: int, cap: int
    ) -> list[list[str]]:
        return await job_reads.log_tails(ref, job_ids, lines, cap)

    async def job_live_view(self, ref: QueueRef, job_id: str) -> dict[str, Any]:
        return await job_reads.job_live_view(ref, job_id)

    async def workers(self, connection: str, refs: list[QueueRef]) -> list[WorkerConnection]:
        return await queue_reads.workers(connection, refs)

    async def schedulers(
        self, ref: QueueRef, limit: int
    ) -> list[tuple[str, dict[str, str], int | None]]:
        return await queue_reads.schedulers(ref, limit)

    async def flow(
        self, ref: QueueRef, job_id: str, depth: int, max_children: int, max_nodes: int | None
    ) -> dict[str, Any]:
        return await flow.read_flow(ref, job_id, depth, max_children, max_nodes)

    async def hygiene(self, ref: QueueRef) -> tuple[dict[str, str], dict[str, int]]:
        return await queue_reads.hygiene(ref)


POSTGRES = PostgresStore()
