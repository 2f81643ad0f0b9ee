"""One job in full: its fields, state, logs and flow relatives."""

from __future__ import annotations

from typing import Any

from queues.config.settings import get_config
from queues.errors import JobGone, JobNotFound, QueueNotFound
from queues.reads.discovery import known
from queues.reads.job_fields import due_at_ms, job_from_hash
from queues.reads.keys import QueueRef
from queues.reads.listing import ROW_FIELDS
from queues.reads.scripts import in_pipeline, read_capped_fields
from queues.reads.store import other_store
from queues.reads.stuck import is_stuck, lock_exists, lock_key
from queues.redis import connections
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

# Checked in BullMQ's own order (its getState script): sorted sets first, they are O(log n).
_ZSET_STATES = ("completed", "failed", "delayed", "prioritized", "waiting-children")
_LIST_STATES = (("active", "active"), ("wait", "waiting"), ("paused", "waiting"))


def job_ref_from_key(job_key: str, connection: str | None = None) -> dict[str, str] | None:
    """``<prefix>:<queue>:<id>`` → queue ref parts, for any configured prefix; the queue is on
    ``connection`` (None: the default one), where the key was read."""
    for prefix in sorted(get_config()["PREFIXES"], key=len, reverse=True):
        head = prefix + ":"
        if job_key.startswith(head):
            queue, sep, job_id = job_key[len(head) :].partition(":")
            if sep and queue and job_id:
                ref = QueueRef(prefix, queue, connection or connections.default_name())
                return {"slug": ref.slug, "queue": queue, "id": job_id}
    return None


async def job_detail(
    ref: QueueRef, job_id: str, *, log_lines: int | None = None, cap: int | None = None
) -> dict[str, Any]:
    """The job with ``state``, ``logs`` and ``children``: uncut, or with ``cap`` its fields cut
    at that many bytes inside Redis (named in ``truncated``), as the job page reads it: a 30 MB
    job then costs neither Redis nor this process more than the page shows."""
    store = other_store(ref.connection)
    if store is not None:
        return await store.job_detail(ref, job_id, log_lines=log_lines, cap=cap)
    lines = int(log_lines if log_lines is not None else get_config()["DETAIL_LOG_LINES"])
    redis = get_client(ref.connection)
    job_key = ref.job_key(job_id)
    async with translate_redis_errors():
        if not await known(ref):
            raise QueueNotFound(f"Unknown queue {ref.slug!r}")
        async with redis.pipeline(transaction=False) as pipe:
            if cap is None:
                pipe.hgetall(job_key)
            else:
                await in_pipeline(redis, pipe, "read_jobs", [job_key], [cap, *PAGE_FIELDS])
            pipe.lrange(f"{job_key}:logs", -lines, -1) if lines > 0 else pipe.lrange(
                f"{job_key}:logs", 0, -1
            )
            pipe.llen(f"{job_key}:logs")
            for zset_state in _ZSET_STATES:
                pipe.zscore(ref.key(zset_state), job_id)
            pipe.smembers(f"{job_key}:dependencies")
            pipe.hkeys(f"{job_key}:processed")
            pipe.hkeys(f"{job_key}:failed")
            pipe.zrange(f"{job_key}:unsuccessful", 0, -1)
            pipe.exists(lock_key(ref, job_id))
            replies = await pipe.execute(raise_on_error=False)
        raw, logs, log_count = replies[0], replies[1], replies[2]
        cut: dict[str, int] = {}
        if cap is not None and not isinstance(raw, Exception):
            raw, cut = _capped_hash(raw)
        scores = replies[3 : 3 + len(_ZSET_STATES)]
        pending, processed, failed, ignored, locked = replies[3 + len(_ZSET_STATES) :]
        if isinstance(raw, Exception):
            raise JobNotFound(f"Job {job_id!r} is not a readable job hash ({raw})")
        if not raw:
            raise JobGone(f"No job {job_id!r} in queue {ref.slug!r}")
        state = _zset_state(scores) or await _list_state(ref, job_id)

    job = job_from_hash(job_id, raw, cut)
    job["state"] = state
    job["stuck"] = is_stuck(state, locked)
    job["queueQualifiedName"] = ref.qualified_name
    job["dueAt"] = due_at_ms(scores[_ZSET_STATES.index("delayed")])
    job["logs"] = logs if isinstance(logs, list) else []
    job["logsCount"] = log_count if isinstance(log_count, int) else 0
    job["children"] = {
        "pending": _relatives(pending, ref.connection),
        "processed": _relatives(processed, ref.connection),
        "failed": _relatives(failed, ref.connection),
        "ignored": _relatives(ignored, ref.connection),
    }
    parent_key = job.get("parentKey")
    job["parentRef"] = job_ref_from_key(parent_key, ref.connection) if parent_key else None
    return job


def _capped_hash(reply: Any) -> tuple[dict[str, str], dict[str, int]]:
    """lua/read_jobs.lua's reply for one hash → (field → value, field → length before the cut)."""
    ((values, cut_flat),) = reply
    if cut_flat and cut_flat[0] == 0:
        raise JobNotFound(f"Not a readable job hash ({cut_flat[1]})")
    raw = {f: v for f, v in zip(PAGE_FIELDS, values, strict=True) if v is not None}
    cut = {PAGE_FIELDS[i - 1]: size for i, size in zip(cut_flat[::2], cut_flat[1::2], strict=True)}
    return raw, cut


def _relatives(keys: Any, connection: str) -> list[dict[str, str]]:
    if not isinstance(keys, (list, set)):
        return []
    found = []
    for key in sorted(keys):
        parsed = job_ref_from_key(key, connection)
        found.append(parsed if parsed else {"slug": "", "queue": "", "id": key})
    return found


# What the job page shows: a list row's fields, the stack traces, and the long names of fields
# BullMQ now stores under short ones (old writers).
PAGE_FIELDS = (
    *ROW_FIELDS,
    "stacktrace",
    "attemptsStarted",
    "stalledCounter",
    "repeatJobKey",
    "deduplicationId",
    "processedBy",
    "nextRepeatableJobId",
    "deferredFailure",
)

# What the job page's live parts show: everything but the data (the page keeps the data it
# loaded; an edit reloads it), values cut at the page's field cap inside Redis.
LIVE_FIELDS = (*(f for f in ROW_FIELDS if f != "data"), "stacktrace")


def _zset_state(scores: list[Any]) -> str | None:
    """The sorted-set state the job is in, from its scores in _ZSET_STATES' order."""
    for state, score in zip(_ZSET_STATES, scores, strict=True):
        if score is not None and not isinstance(score, Exception):
            return state
    return None


async def _list_state(ref: QueueRef, job_id: str) -> str:
    """The list the job is in. LPOS walks a list, a million waiting jobs long at times: asked
    only once the sorted sets (O(log n)) have said no, as BullMQ's getState does."""
    async with get_client(ref.connection).pipeline(transaction=False) as pipe:
        for suffix, _ in _LIST_STATES:
            pipe.lpos(ref.key(suffix), job_id)
        positions = await pipe.execute(raise_on_error=False)
    for (_, name), pos in zip(_LIST_STATES, positions, strict=True):
        if isinstance(pos, int):
            return name
    return "unknown"


async def job_live_view(ref: QueueRef, job_id: str) -> dict[str, Any]:
    """The job as its page's live parts show it, with its state (one round trip, two for a job
    in a list); ``{"id", "state": "removed"}`` once gone."""
    store = other_store(ref.connection)
    if store is not None:
        return await store.job_live_view(ref, job_id)
    cap = int(get_config()["DETAIL_FIELD_CAP"])
    async with translate_redis_errors():
        zscores = [("ZSCORE", ref.key(state), job_id) for state in _ZSET_STATES]
        rows, (*scores, locked) = await read_capped_fields(
            get_client(ref.connection),
            [ref.job_key(job_id)],
            cap,
            LIVE_FIELDS,
            [*zscores, lock_exists(ref, job_id)],
        )
    ((values, cut_flat),) = rows
    if cut_flat and cut_flat[0] == 0:
        return {"id": job_id, "state": "unknown", "invalid": ["hash"], "truncated": {}}
    raw = {f: v for f, v in zip(LIVE_FIELDS, values, strict=True) if v is not None}
    if not raw:
        return {"id": job_id, "state": "removed"}
    cut = {LIVE_FIELDS[i - 1]: size for i, size in zip(cut_flat[::2], cut_flat[1::2], strict=True)}
    job = job_from_hash(job_id, raw, cut)
    async with translate_redis_errors():
        job["state"] = _zset_state(scores) or await _list_state(ref, job_id)
    job["stuck"] = is_stuck(job["state"], locked)
    job["dueAt"] = due_at_ms(scores[_ZSET_STATES.index("delayed")])
    return job
