"""A Postgres store's queues and their counts, read through BullMQ's schema.

Discovery lists every queue with a job, a meta row or a scheduler (a walk of the job table's
primary key, one step per queue, not per job), plus the configured names. Counts are BullMQ's
own ``get_counts`` and ``get_queue_meta`` per queue, all sent in one round trip.
"""

from __future__ import annotations

from typing import Any

from queues.config.settings import default_prefix, get_config
from queues.postgres import rows
from queues.postgres.sessions import session
from queues.reads.counts import QueueSummary
from queues.reads.discovery import Discovered
from queues.reads.keys import QueueRef

# Distinct queues of the job table by its (queue, id) key: one index probe per queue.
_QUEUES_SQL = """
WITH RECURSIVE walk(queue) AS (
  SELECT min(queue) FROM job
  UNION ALL
  SELECT (SELECT min(queue) FROM job WHERE job.queue > walk.queue) FROM walk
  WHERE walk.queue IS NOT NULL
)
SELECT queue FROM walk WHERE queue IS NOT NULL
UNION SELECT queue FROM meta
UNION SELECT queue FROM scheduler
"""


def ref_of(name: str, connection: str) -> QueueRef:
    """A Postgres queue's reference: BullMQ's schema has no key prefix, so its queues sit
    under the default one and URLs name them by their bare name."""
    return QueueRef(default_prefix(), name, connection)


async def discover(connection: str) -> Discovered:
    listed = await session(connection).query(_QUEUES_SQL)
    found = {ref_of(str(row["queue"]), connection) for row in listed}
    for slug in get_config()["QUEUES"]:
        ref = QueueRef.from_slug(slug)
        if ref.connection == connection:
            found.add(ref)
    return Discovered(queues=tuple(sorted(found)))


async def exists(ref: QueueRef) -> bool:
    answer = await session(ref.connection).query(
        "SELECT EXISTS (SELECT 1 FROM job WHERE queue = %s) "
        "OR EXISTS (SELECT 1 FROM meta WHERE queue = %s) AS found",
        [ref.name, ref.name],
    )
    return bool(answer and answer[0]["found"])


async def summaries(connection: str, refs: list[QueueRef]) -> list[QueueSummary]:
    calls: list[tuple[str, list[Any]]] = []
    for ref in refs:
        calls += [("get_counts", [ref.name]), ("get_queue_meta", [ref.name])]
    replies = await session(connection).commands(calls)
    return [
        rows.summary(ref, replies[2 * index], replies[2 * index + 1])
        for index, ref in enumerate(refs)
    ]


_HYGIENE_SQL = """
SELECT
  (SELECT count(*) FROM job WHERE queue = %s AND state = 'completed') AS completed,
  (SELECT count(*) FROM job WHERE queue = %s AND state = 'failed') AS failed,
  (SELECT count(*) FROM event WHERE queue = %s) AS events,
  (SELECT count(*) FROM metrics WHERE queue = %s) AS metrics
"""


async def hygiene(ref: QueueRef) -> tuple[dict[str, str], dict[str, int]]:
    """The queue's meta rows, and the figures hygiene warnings are decided on: finished jobs
    kept, event rows, metrics rows (Postgres has no legacy repeatable jobs)."""
    meta_rows, figures = await session(ref.connection).queries(
        [
            (
                "SELECT field, value FROM meta WHERE queue = %s AND value IS NOT NULL",
                [ref.name],
            ),
            (_HYGIENE_SQL, [ref.name] * 4),
        ]
    )
    meta = {str(row["field"]): str(row["value"]) for row in meta_rows}
    return meta, {name: int(value) for name, value in figures[0].items()}
