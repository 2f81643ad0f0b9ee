"""A Postgres store's queues and their counts, read through BullMQ's schema.

Discovery lists every queue with a job, an event, a scheduler or a meta row of its own (walks
of the job and event tables' primary keys, one step per queue, not per row), plus the
configured names. The meta rows every BullMQ ``Queue`` writes as it connects (its version and
events cap) do not make a queue: a ``Queue`` connecting while its queue is obliterated writes
them again after BullMQ's ``obliterate`` deleted them (Node's ``new Queue(name).obliterate()``
does), and the queue is gone all the same. Counts are BullMQ's
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

# The meta fields a BullMQ Queue writes as it connects (Node's ``metaValues``).
CONNECT_META = ("version", "opts.maxLenEvents")

# Distinct queues of the job and event tables by their (queue, id) keys: one index probe per
# queue.
_QUEUES_SQL = """
WITH RECURSIVE jobs(queue) AS (
  SELECT min(queue) FROM job
  UNION ALL
  SELECT (SELECT min(queue) FROM job WHERE job.queue > jobs.queue) FROM jobs
  WHERE jobs.queue IS NOT NULL
), events(queue) AS (
  SELECT min(queue) FROM event
  UNION ALL
  SELECT (SELECT min(queue) FROM event WHERE event.queue > events.queue) FROM events
  WHERE events.queue IS NOT NULL
)
SELECT queue FROM jobs WHERE queue IS NOT NULL
UNION SELECT queue FROM events WHERE queue IS NOT NULL
UNION SELECT queue FROM meta WHERE field <> ALL(%s::text[])
UNION SELECT queue FROM scheduler
"""

# Of the names given, those the store holds nothing of that makes a queue (as discovery).
_GONE_SQL = """
SELECT name FROM unnest(%s::text[]) AS asked(name)
WHERE NOT EXISTS (SELECT 1 FROM job WHERE queue = asked.name)
  AND NOT EXISTS (SELECT 1 FROM event WHERE queue = asked.name)
  AND NOT EXISTS (SELECT 1 FROM scheduler WHERE queue = asked.name)
  AND NOT EXISTS (
    SELECT 1 FROM meta WHERE queue = asked.name AND field <> ALL(%s::text[])
  )
"""


def ref_of(name: str, connection: str) -> QueueRef:
    """A Postgres queue's reference: BullMQ's schema has no key prefix, so its queues sit
    under the default one and URLs name them by their bare name."""
    return QueueRef(default_prefix(), name, connection)


async def discover(connection: str) -> Discovered:
    listed = await session(connection).query(_QUEUES_SQL, [list(CONNECT_META)])
    found = {ref_of(str(row["queue"]), connection) for row in listed}
    for slug in get_config()["QUEUES"]:
        ref = QueueRef.from_slug(slug)
        if ref.connection == connection:
            found.add(ref)
    return Discovered(queues=tuple(sorted(found)))


async def exists(ref: QueueRef) -> bool:
    return not await gone(ref.connection, [ref])


async def gone(connection: str, refs: list[QueueRef]) -> set[QueueRef]:
    """Those of ``refs`` discovery would not list: no job, event, scheduler or meta row of
    their own left (obliterated: BullMQ's ``obliterate`` deletes them all), in one round
    trip. A failed read raises: it proves nothing gone."""
    if not refs:
        return set()
    named = {ref.name: ref for ref in refs}
    found = await session(connection).query(_GONE_SQL, [sorted(named), list(CONNECT_META)])
    return {named[str(row["name"])] for row in found}


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
