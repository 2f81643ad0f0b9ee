"""Pages of jobs in one state: two round trips (ids + total, then the capped hashes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from queues.conf import get_config
from queues.connection import get_client
from queues.discovery import known
from queues.errors import BadParameter, QueueNotFound
from queues.job_fields import job_from_hash
from queues.keys import STATES, QueueRef
from queues.redis_errors import translate_redis_errors
from queues.scripts import script

Order = Literal["asc", "desc"]


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
    low, high = int(config["MIN_PAGE_SIZE"]), int(config["MAX_PAGE_SIZE"])
    if not low <= per_page <= high:
        raise BadParameter(f"per_page must be between {low} and {high}")
    if order not in ("asc", "desc"):
        raise BadParameter("order must be 'asc' or 'desc'")


def _queue_range(pipe: Any, key: str, kind: str, start: int, end: int, asc: bool) -> None:
    """Ids in the order Node's ``queue.getJobs([state], start, end, asc)`` returns them."""
    if kind == "list":
        # Jobs are LPUSHed: the head is the newest. Ascending reads from the tail.
        if asc:
            pipe.lrange(key, -(end + 1), -(start + 1))
        else:
            pipe.lrange(key, start, end)
        pipe.llen(key)
    else:
        if asc:
            pipe.zrange(key, start, end)
        else:
            pipe.zrevrange(key, start, end)
        pipe.zcard(key)


async def fetch_jobs(ref: QueueRef, job_ids: list[str], cap: int) -> list[dict[str, Any]]:
    """Hashes of ``job_ids`` with fields over ``cap`` bytes cut, in one round trip.
    Jobs removed since their id was read are left out."""
    if not job_ids:
        return []
    redis = get_client()
    replies = await script(redis, "read_jobs")(
        keys=[ref.job_key(job_id) for job_id in job_ids], args=[cap]
    )
    jobs = []
    for job_id, (flat, cut_flat) in zip(job_ids, replies, strict=False):
        cut = dict(zip(cut_flat[::2], cut_flat[1::2], strict=False))
        if "__error" in cut:
            jobs.append(
                {"id": job_id, "invalid": ["hash"], "error": str(cut["__error"]), "truncated": {}}
            )
            continue
        if not flat:
            continue
        jobs.append(job_from_hash(job_id, dict(zip(flat[::2], flat[1::2], strict=False)), cut))
    return jobs


async def job_page(
    ref: QueueRef, state: str, page: int = 1, per_page: int = 50, order: str = "desc"
) -> JobPage:
    validate_page(state, page, per_page, order)
    async with translate_redis_errors():
        if not await known(ref):
            raise QueueNotFound(f"Unknown queue {ref.slug!r}")
        suffix, kind = STATES[state]
        start = (page - 1) * per_page
        end = start + per_page - 1
        async with get_client().pipeline(transaction=False) as pipe:
            _queue_range(pipe, ref.key(suffix), kind, start, end, order == "asc")
            ids, total = await pipe.execute()
        if kind == "list" and order == "asc":
            ids.reverse()
        jobs = await fetch_jobs(ref, ids, int(get_config()["LIST_FIELD_CAP"]))
    for job in jobs:
        job["state"] = state
        job["queueQualifiedName"] = ref.qualified_name
    return JobPage(jobs, int(total), page, per_page, state, order)  # type: ignore[arg-type]
