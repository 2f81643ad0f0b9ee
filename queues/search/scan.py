"""Searching one state of a queue with a bounded scan.

Jobs are read ``chunk`` at a time (one range read and one capped hash read per chunk, a few
milliseconds of Redis each), up to ``budget`` jobs per search and, if asked, ``max_matches``
matches; matches and progress are yielded as they come, so a caller can stream them and stop at
any time.

Queries are in the language of queues/search/query/ (terms, AND, OR, NOT, comparisons and
times). Text matches ignore case. Fields larger than ``SEARCH_FIELD_CAP`` are searched in their
first part; a query with a ``data.<path>`` (``opts.``, ``returnvalue.``) term skips jobs whose
value there it cannot parse (progress counts them). A ``logs:`` term reads each job's newest
``LOG_LINES`` log lines (their first ``LOG_LINE_CAP`` bytes), one more round trip a step.
``as_listed`` reads matches again the way the job list does, for showing them as list rows.
A Postgres store's queue is scanned the same way through BullMQ's own SQL reads
(``get_range``, ``get_job_data``, ``get_job_logs_desc``: queues/postgres/job_reads.py).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from queues.cancelling import raise_if_cancelled
from queues.config.settings import get_config
from queues.errors import BadParameter, QueueNotFound
from queues.reads.discovery import known
from queues.reads.keys import STATES, QueueRef
from queues.reads.listing import fetch_jobs
from queues.reads.scripts import per_key
from queues.reads.store import QueueStore, other_store
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors
from queues.search.query import parse
from queues.search.query.parser import Query
from queues.search.step_pace import Pace

# Jobs one search may read, whatever it asks for.
MAX_BUDGET = 1_000_000
# Newest log lines of each job a ``logs:`` term reads, and the most bytes of each it reads.
LOG_LINES = 50
LOG_LINE_CAP = 2048


def parse_query(raw: str) -> Query:
    """``raw`` in the search's language (queues/search/query/); a ``BadParameter`` if wrong."""
    return parse(raw)


@dataclass
class ScanProgress:
    scanned: int
    total: int
    matched: int
    done: bool
    full: bool = False  # ended at the most matches asked for, before the end of the scan
    # Jobs a ``data.<path>`` query could not look into: their data is not JSON, nested too
    # deeply, or larger than the search reads.
    skipped: int = 0


async def search(
    ref: QueueRef,
    state: str,
    raw_query: str,
    budget: int | None = None,
    chunk: int = 200,
    max_matches: int | None = None,
    pace: Pace | None = None,
    parsed: Query | None = None,
) -> AsyncIterator[dict[str, Any] | ScanProgress]:
    """``pace``, when given, sizes every step instead of ``chunk`` (and learns from each).
    ``parsed``: ``raw_query`` parsed already (a search of many states or queues parses it once,
    so that ``now`` in a time term is one moment for all of them)."""
    if state not in STATES:
        raise BadParameter(f"Unknown state {state!r}")
    query = parsed or parse_query(raw_query)
    config = get_config()
    budget = min(int(budget or config["SEARCH_BUDGET"]), MAX_BUDGET)
    cap = int(config["SEARCH_FIELD_CAP"])
    # A Postgres store is read through BullMQ's own SQL reads (queues/postgres/), in the same
    # order as a page of the state lists its jobs.
    store = other_store(ref.connection)
    redis = get_client(ref.connection) if store is None else None
    async with translate_redis_errors():
        if not await known(ref):
            raise QueueNotFound(f"Unknown queue {ref.slug!r}")
        total = await _total(store, redis, ref, state)
    limit = min(total, budget)
    scanned = matched = skipped = 0
    while scanned < limit:
        # A reader that went away cancels the scan; on Python 3.11 the cancel can be lost
        # inside redis-py, so the scan looks for it before every chunk.
        raise_if_cancelled()
        end = min(scanned + (pace.size if pace else chunk), limit) - 1
        began = time.perf_counter()
        async with translate_redis_errors():
            ids = await _ids(store, redis, ref, state, scanned, end)
            jobs = await fetch_jobs(ref, ids, cap)
            if query.needs_logs and store is not None:
                tails = await store.log_tails(
                    ref, [str(j["id"]) for j in jobs], LOG_LINES, LOG_LINE_CAP
                )
                for job, lines in zip(jobs, tails, strict=True):
                    job["logs"] = lines
            elif query.needs_logs:
                await _read_logs(redis, ref, jobs)
        if pace:
            pace.took(time.perf_counter() - began, len(ids))
        for job in jobs:
            if _unreadable(query, job):
                skipped += 1
                continue
            if query.matches(job):
                matched += 1
                job["state"] = state
                yield job
                if matched == max_matches:
                    # The scan covered the chunk up to this job, not the jobs after it.
                    scanned += ids.index(str(job["id"])) + 1
                    yield ScanProgress(
                        scanned, total, matched, done=True, full=True, skipped=skipped
                    )
                    return
        scanned = end + 1
        yield ScanProgress(scanned, total, matched, done=False, skipped=skipped)
    yield ScanProgress(scanned, total, matched, done=True, skipped=skipped)


async def _total(store: QueueStore | None, redis: Any, ref: QueueRef, state: str) -> int:
    if store is not None:
        return await store.state_total(ref, state)
    suffix, kind = STATES[state]
    key = ref.key(suffix)
    return int(await (redis.llen(key) if kind == "list" else redis.zcard(key)))


async def _ids(
    store: QueueStore | None, redis: Any, ref: QueueRef, state: str, start: int, end: int
) -> list[str]:
    """Ids ``start``..``end`` of the state, newest first."""
    if store is not None:
        return await store.state_ids(ref, state, start, end)
    suffix, kind = STATES[state]
    key = ref.key(suffix)
    read = redis.lrange(key, start, end) if kind == "list" else redis.zrevrange(key, start, end)
    return [str(job_id) for job_id in await read]


def _unreadable(query: Query, job: dict[str, Any]) -> bool:
    """A job whose JSON a path term looks into could not be read whole."""
    return any(root in job["invalid"] or root in job["truncated"] for root in query.json_roots)


async def _read_logs(redis: Any, ref: QueueRef, jobs: list[dict[str, Any]]) -> None:
    """Each job's newest ``LOG_LINES`` log lines (each cut to ``LOG_LINE_CAP`` bytes inside
    Redis), into its ``logs``; one round trip."""
    keys = [f"{ref.job_key(str(job['id']))}:logs" for job in jobs]
    rows, _ = await per_key(redis, "read_log_tails", keys, [LOG_LINES, LOG_LINE_CAP])
    for job, lines in zip(jobs, rows, strict=True):
        job["logs"] = [str(line) for line in lines] if isinstance(lines, list) else []


async def as_listed(
    ref: QueueRef, state: str, matches: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``matches`` read again as the job list reads them (``LIST_FIELD_CAP``, not the search's
    larger cap), so that a match shows exactly as its row in the list does; one round trip.
    A job removed since it matched is shown as it was read when it matched."""
    cap = int(get_config()["LIST_FIELD_CAP"])
    async with translate_redis_errors():
        listed = await fetch_jobs(ref, [str(job["id"]) for job in matches], cap)
    by_id = {job["id"]: job for job in listed}
    rows = []
    for match in matches:
        row = by_id.get(str(match["id"]), match)
        row["state"] = state
        row["queueQualifiedName"] = ref.qualified_name
        rows.append(row)
    return rows
