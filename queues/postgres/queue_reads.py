"""A Postgres store's queues and their counts, read through BullMQ's schema.

Discovery lists every queue with a job, a meta row or a scheduler (a walk of the job table's
primary key, one step per queue, not per job), plus the configured names. Counts are BullMQ's
own ``get_counts`` and ``get_queue_meta`` per queue, all sent in one round trip.
"""

from __future__ import annotations

from typing import Any

from queues.config.settings import default_prefix, get_config
from queues.postgres import rows
from queues.postgres.bullmq_queues import postgres_queue
from queues.postgres.sessions import session
from queues.reads.counts import QueueSummary
from queues.reads.discovery import Discovered
from queues.reads.keys import QueueRef
from queues.reads.workers import WorkerConnection

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


# BullMQ's own client list (commands/get_client_list.sql) with what a workers list shows:
# where each session comes from, how long it has been up, and since when it is idle.
_SESSIONS_SQL = """
SELECT application_name,
  COALESCE(host(client_addr), 'local') || ':' || COALESCE(client_port, 0) AS addr,
  extract(epoch FROM now() - backend_start)::int AS age,
  extract(epoch FROM now() - state_change)::int AS idle
FROM pg_stat_activity
WHERE datname = current_database() AND application_name <> ''
"""


async def workers(connection: str, refs: list[QueueRef]) -> list[WorkerConnection]:
    """The worker sessions of ``refs``: BullMQ's workers name their LISTEN session after the
    queue, Node's ``<queue>[:w:<name>]``, Python's ``<schema>:<queue>[:w:<name>]``."""
    current = session(connection)
    owners: dict[str, tuple[QueueRef, str]] = {}
    for ref in refs:
        owners[ref.name] = (ref, "node")
        owners[f"{current.url.schema}:{ref.name}"] = (ref, "python")
    found = []
    for row in await current.query(_SESSIONS_SQL):
        name = str(row["application_name"])
        base, _, worker_name = name.partition(":w:")
        owner = owners.get(base)
        if owner is None:
            continue
        ref, library = owner
        found.append(
            WorkerConnection(
                queue=ref.slug,
                worker_name=worker_name,
                library=library,
                addr=str(row["addr"]),
                age_s=int(row["age"] or 0),
                idle_s=int(row["idle"] or 0),
                client_name=name,
            )
        )
    return found


async def schedulers(ref: QueueRef, limit: int) -> list[tuple[str, dict[str, str], int | None]]:
    """The queue's job schedulers, next to run first, as BullMQ's own Postgres backend reads
    them: (id, the fields a Redis scheduler hash holds, the next run in ms)."""
    backend = postgres_queue(ref).backend
    found: list[tuple[str, dict[str, str], int | None]] = await backend.getJobSchedulers(
        0, limit - 1, True
    )
    return found
