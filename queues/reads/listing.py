"""Pages of jobs in one state: two round trips (ids + total, then the capped hashes)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from queues.config.settings import get_config
from queues.errors import BadParameter, QueueDataError, QueueNotFound
from queues.reads.dead_letters import dead_letter_ref, original_states, read_envelope
from queues.reads.discovery import known
from queues.reads.job_fields import due_at_ms, job_from_hash
from queues.reads.keys import STATES, QueueRef
from queues.reads.scripts import read_capped_fields
from queues.reads.store import other_store
from queues.reads.stuck import is_stuck, lock_exists
from queues.redis import fastpipe
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors
from queues.redis.fastpipe import Command

Order = Literal["asc", "desc"]
# Beyond this a page number is a slip (and its offset would overflow Redis' range arguments).
MAX_PAGE = 1_000_000


@dataclass(frozen=True)
class JobPage:
    jobs: list[dict[str, Any]]
    total: int
    page: int
    per_page: int
    state: str
    order: Order

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def digest(self) -> str:
        """A short fingerprint of what this page holds: a page whose list has it already has
        nothing to gain from swapping in the same list again (a swap under a person's finger
        or keyboard focus loses their tap or their place)."""
        text = json.dumps(self.as_json(), sort_keys=True, default=str)
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def as_json(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "total": self.total,
            "page": self.page,
            "per_page": self.per_page,
            "state": self.state,
            "order": self.order,
        }


def validate_page(state: str, page: int, per_page: int, order: str) -> None:
    config = get_config()
    if state not in STATES:
        raise BadParameter(f"Unknown state {state!r}; use one of: {', '.join(STATES)}")
    if page < 1:
        raise BadParameter("page must be 1 or more")
    if page > MAX_PAGE:
        raise BadParameter(f"page must be at most {MAX_PAGE}")
    low, high = int(config["MIN_PAGE_SIZE"]), int(config["MAX_PAGE_SIZE"])
    if not low <= per_page <= high:
        raise BadParameter(f"per_page must be between {low} and {high}")
    if order not in ("asc", "desc"):
        raise BadParameter("order must be 'asc' or 'desc'")


def _range_commands(key: str, kind: str, start: int, end: int, asc: bool) -> list[Command]:
    """Ids in the order Node's ``queue.getJobs([state], start, end, asc)`` returns them, and
    the total."""
    if kind == "list":
        # Jobs are LPUSHed: the head is the newest. Ascending reads from the tail.
        if asc:
            return [("LRANGE", key, -(end + 1), -(start + 1)), ("LLEN", key)]
        return [("LRANGE", key, start, end), ("LLEN", key)]
    return [("ZRANGE" if asc else "ZREVRANGE", key, start, end), ("ZCARD", key)]


# The hash fields a list row reads: everything BullMQ writes but the stack traces, which are
# most of a failed job's bytes and which no row shows (the job detail has them whole).
ROW_FIELDS = (
    "name",
    "data",
    "opts",
    "timestamp",
    "delay",
    "priority",
    "processedOn",
    "finishedOn",
    "progress",
    "returnvalue",
    "failedReason",
    "atm",
    "ats",
    "stc",
    "attemptsMade",
    "parentKey",
    "parent",
    "rjk",
    "deid",
    "pb",
    "nrjid",
    "defa",
)


async def fetch_jobs(
    ref: QueueRef,
    job_ids: list[str],
    cap: int,
    *,
    active: bool = False,
    due_of: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """Rows for ``job_ids`` (ROW_FIELDS, values over ``cap`` bytes cut, and ``dueAt``) in one
    round trip. Jobs removed since their id was read are left out. Rows of the dead-letter
    queue also carry ``originalState``, their original job's state now (one more round trip).
    ``active``: the jobs are active ones, and each row says whether it is ``stuck`` (its lock,
    read in the same round trip, is gone). ``due_of``: the only jobs that may be delayed (None:
    any); the others' ``dueAt`` is None without a read."""
    if not job_ids:
        return []
    store = other_store(ref.connection)
    if store is not None:
        return await store.job_rows(ref, job_ids, cap)
    redis = get_client(ref.connection)
    keys = [ref.job_key(job_id) for job_id in job_ids]
    delayed = ref.key("delayed")
    scored = [job_id for job_id in job_ids if due_of is None or job_id in due_of]
    scores = [("ZSCORE", delayed, job_id) for job_id in scored]
    locks = [lock_exists(ref, job_id) for job_id in job_ids] if active else []
    replies, more = await read_capped_fields(redis, keys, cap, ROW_FIELDS, [*scores, *locks])
    score_of = dict(zip(scored, more[: len(scored)], strict=True))
    due_scores = [score_of.get(job_id) for job_id in job_ids]
    lock_replies = more[len(scored) :]
    jobs: list[dict[str, Any]] = []
    for index, (job_id, (values, cut_flat), score) in enumerate(
        zip(job_ids, replies, due_scores, strict=False)
    ):
        if cut_flat and cut_flat[0] == 0:
            jobs.append(
                {"id": job_id, "invalid": ["hash"], "error": str(cut_flat[1]), "truncated": {}}
            )
            continue
        raw = {
            field: value
            for field, value in zip(ROW_FIELDS, values, strict=True)
            if value is not None
        }
        if not raw:
            continue  # removed since its id was read
        cut = {
            ROW_FIELDS[index - 1]: size
            for index, size in zip(cut_flat[::2], cut_flat[1::2], strict=True)
        }
        row = job_from_hash(job_id, raw, cut)
        del row["stacktrace"]
        row["dueAt"] = due_at_ms(score)
        if active:
            row["stuck"] = is_stuck("active", lock_replies[index])
        jobs.append(row)
    if jobs and ref == dead_letter_ref(ref.connection):
        states = await original_states(ref, [read_envelope(job.get("data")) for job in jobs])
        for job, state in zip(jobs, states, strict=True):
            job["originalState"] = state
    return jobs


async def job_page(
    ref: QueueRef, state: str, page: int = 1, per_page: int = 50, order: str = "desc"
) -> JobPage:
    validate_page(state, page, per_page, order)
    store = other_store(ref.connection)
    if store is not None:
        shown: JobPage = await store.job_page(ref, state, page, per_page, order)
        return shown
    async with translate_redis_errors():
        if not await known(ref):
            raise QueueNotFound(f"Unknown queue {ref.slug!r}")
        suffix, kind = STATES[state]
        start = (page - 1) * per_page
        end = start + per_page - 1
        ids, total = await fastpipe.execute(
            get_client(ref.connection),
            _range_commands(ref.key(suffix), kind, start, end, order == "asc"),
        )
        problem = next((r for r in (ids, total) if isinstance(r, Exception)), None)
        if problem is not None:
            raise QueueDataError(f"Cannot read the {state} jobs of {ref.slug!r}: {problem}")
        if kind == "list" and order == "asc":
            ids.reverse()
        cap = int(get_config()["LIST_FIELD_CAP"])
        jobs = await fetch_jobs(ref, ids, cap, active=state == "active")
    for job in jobs:
        job["state"] = state
        job["queueQualifiedName"] = ref.qualified_name
    return JobPage(jobs, int(total), page, per_page, state, order)  # type: ignore[arg-type]
