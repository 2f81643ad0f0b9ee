"""Searching one state of a queue with a bounded scan.

Jobs are read ``chunk`` at a time (one range read and one capped hash read per chunk, a few
milliseconds of Redis each), up to ``budget`` jobs per search and, if asked, ``max_matches``
matches; matches and progress are yielded as they come, so a caller can stream them and stop at
any time.

Query forms: ``name:<text>``, ``reason:<text>``, ``data.<path> = <value>`` (JSON equality, e.g.
``data.userId = 42``), ``id:<text>``, or plain text (in the name, the data or the failed reason).
Text matches ignore case. Data larger than ``SEARCH_FIELD_CAP`` is searched in its first part;
a ``data.<path>`` query skips jobs whose data it cannot parse (progress counts them).
``as_listed`` reads matches again the way the job list does, for showing them as list rows.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from queues.cancelling import raise_if_cancelled
from queues.config.settings import get_config
from queues.errors import BadParameter, QueueNotFound
from queues.reads.discovery import known
from queues.reads.jsontext import dumps, loads_shown
from queues.reads.keys import STATES, QueueRef
from queues.reads.listing import fetch_jobs
from queues.reads.store import other_store
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors
from queues.search.step_pace import Pace

# Jobs one search may read, whatever it asks for.
MAX_BUDGET = 1_000_000
_FIELD_QUERY = re.compile(r"^data((?:\.[\w-]+)+)\s*(==|=)\s*(.+)$")


@dataclass(frozen=True)
class Query:
    kind: str  # "text", "name", "reason", "id", "field"
    text: str = ""
    path: tuple[str, ...] = ()
    value: Any = None

    def matches(self, job: dict[str, Any]) -> bool:
        return self.matched_in(job) is not None

    def matched_in(self, job: dict[str, Any]) -> str | None:
        """Which field of ``job`` the query matched (``data.<path>`` for a field query)."""
        if self.kind == "field":
            current: Any = job.get("data")
            for part in self.path:
                if isinstance(current, dict) and part in current:
                    current = current[part]
                elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
                    current = current[int(part)]
                else:
                    return None
            found = current == self.value or str(current) == str(self.value)
            return "data." + ".".join(self.path) if found else None
        needle = self.text
        if self.kind == "name":
            return "name" if needle in str(job.get("name") or "").lower() else None
        if self.kind == "reason":
            return "failedReason" if needle in str(job.get("failedReason") or "").lower() else None
        if self.kind == "id":
            return "id" if needle in str(job.get("id")).lower() else None
        data = job.get("data")
        data_text = data if isinstance(data, str) else _compact(data)
        for field, value in (
            ("name", job.get("name") or ""),
            ("data", data_text),
            ("failedReason", job.get("failedReason") or ""),
        ):
            if needle in str(value).lower():
                return field
        return None


def _compact(value: Any) -> str:
    return dumps(value).decode()


def parse_query(raw: str) -> Query:
    raw = raw.strip()
    if not raw:
        raise BadParameter("Type something to search for")
    field = _FIELD_QUERY.match(raw)
    if field:
        path = tuple(field.group(1).strip(".").split("."))
        text = field.group(3).strip()
        try:
            # A value nested deeper than any shown one matches none: it is compared as the text
            # it is (as a value, its text form overflows Python's recursion limit on each job).
            value = loads_shown(text)
        except ValueError:
            value = text.strip("'\"")
        return Query("field", path=path, value=value)
    for prefix in ("name", "reason", "id"):
        if raw.lower().startswith(prefix + ":"):
            return Query(prefix, text=raw[len(prefix) + 1 :].strip().lower())
    return Query("text", text=raw.lower())


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
) -> AsyncIterator[dict[str, Any] | ScanProgress]:
    """``pace``, when given, sizes every step instead of ``chunk`` (and learns from each)."""
    if state not in STATES:
        raise BadParameter(f"Unknown state {state!r}")
    if other_store(ref.connection) is not None:
        raise BadParameter(f"Search is not available yet for {ref.slug!r}: a PostgreSQL store")
    query = parse_query(raw_query)
    config = get_config()
    budget = min(int(budget or config["SEARCH_BUDGET"]), MAX_BUDGET)
    cap = int(config["SEARCH_FIELD_CAP"])
    redis = get_client(ref.connection)
    suffix, kind = STATES[state]
    key = ref.key(suffix)
    async with translate_redis_errors():
        if not await known(ref):
            raise QueueNotFound(f"Unknown queue {ref.slug!r}")
        total = int(await (redis.llen(key) if kind == "list" else redis.zcard(key)))
    limit = min(total, budget)
    scanned = matched = skipped = 0
    while scanned < limit:
        # A reader that went away cancels the scan; on Python 3.11 the cancel can be lost
        # inside redis-py, so the scan looks for it before every chunk.
        raise_if_cancelled()
        end = min(scanned + (pace.size if pace else chunk), limit) - 1
        began = time.perf_counter()
        async with translate_redis_errors():
            read = (
                redis.lrange(key, scanned, end)
                if kind == "list"
                else redis.zrevrange(key, scanned, end)
            )
            ids: list[str] = [str(job_id) for job_id in await read]
            jobs = await fetch_jobs(ref, ids, cap)
        if pace:
            pace.took(time.perf_counter() - began, len(ids))
        for job in jobs:
            if query.kind == "field" and ("data" in job["invalid"] or "data" in job["truncated"]):
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
