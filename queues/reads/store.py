"""Which store holds a connection's queues, and the reads a store other than Redis answers.

Redis is read where it always was (discovery.py, counts.py, listing.py, detail.py). A
connection whose URL names another store (``postgresql://``: BullMQ 6 on PostgreSQL) is read
through this interface instead; each of those modules asks :func:`other_store` once, at its
entry point, and hands the read over.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from django.utils.module_loading import import_string

from queues.redis import connections

if TYPE_CHECKING:
    from queues.reads.keys import QueueRef


POSTGRES_STORE = "queues.postgres.store.POSTGRES"


class QueueStore(Protocol):
    # What the Redis reads return: a Discovered, QueueSummary items and a JobPage. Named
    # loosely here, since the modules defining them dispatch through this one.
    async def discover(self, connection: str) -> Any: ...

    async def exists(self, ref: QueueRef) -> bool: ...

    async def summaries(self, connection: str, refs: list[QueueRef]) -> list[Any]: ...

    async def job_page(
        self, ref: QueueRef, state: str, page: int, per_page: int, order: str
    ) -> Any: ...

    async def job_detail(
        self, ref: QueueRef, job_id: str, *, log_lines: int | None, cap: int | None
    ) -> dict[str, Any]: ...

    async def job_rows(self, ref: QueueRef, job_ids: list[str], cap: int) -> list[dict[str, Any]]:
        """List rows of ``job_ids`` with their states (what the live rows send)."""
        ...

    async def state_total(self, ref: QueueRef, state: str) -> int:
        """The jobs of ``state`` (what a search scans)."""
        ...

    async def state_sizes(self, refs: list[QueueRef], states: list[str]) -> list[dict[str, int]]:
        """``state_total`` of each state of each queue (queues of one connection)."""
        ...

    async def state_ids(self, ref: QueueRef, state: str, start: int, end: int) -> list[str]:
        """Ids ``start``..``end`` of ``state``, newest first (a search's step)."""
        ...

    async def log_tails(
        self, ref: QueueRef, job_ids: list[str], lines: int, cap: int
    ) -> list[list[str]]:
        """Each job's newest ``lines`` log lines, each cut to ``cap`` (a ``logs:`` term)."""
        ...

    async def job_live_view(self, ref: QueueRef, job_id: str) -> dict[str, Any]: ...

    async def workers(self, connection: str, refs: list[QueueRef]) -> list[Any]:
        """The worker connections of ``refs`` (WorkerConnection items)."""
        ...

    async def schedulers(self, ref: QueueRef, limit: int) -> list[Any]:
        """(id, scheduler fields as BullMQ's Redis hash holds them, next run in ms) each."""
        ...

    async def flow(
        self, ref: QueueRef, job_id: str, depth: int, max_children: int, max_nodes: int | None
    ) -> dict[str, Any]:
        """The flow holding the job, from its root (queues/reads/flow.py's shape)."""
        ...

    async def hygiene(self, ref: QueueRef) -> tuple[dict[str, str], dict[str, int]]:
        """The queue's meta fields, and its completed, failed, events and metrics counts."""
        ...


def on_redis(refs: Iterable[QueueRef]) -> list[QueueRef]:
    """The queues of ``refs`` kept in Redis: what Bullpen's reads of keys beside a queue
    (pause reasons, locks, workers' client names) apply to."""
    return [ref for ref in refs if other_store(ref.connection) is None]


def other_store(connection: str) -> QueueStore | None:
    """The store of ``connection`` when it is not Redis; None for a Redis connection."""
    if not connections.is_postgres(connection):
        return None
    return _postgres()


@cache
def _postgres() -> QueueStore:
    # By its path: the store's reads build on this package's (counts, listing), and a site
    # with Redis alone never loads the PostgreSQL driver.
    store: QueueStore = import_string(POSTGRES_STORE)
    return store
