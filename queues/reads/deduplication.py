"""A queue's deduplication keys (``<prefix>:<queue>:de:<id>``), a page at a time.

BullMQ keeps one string key per deduplication id, holding the id of the job that took it, with
the TTL the producer asked for (none: the key lives until the job finishes or is removed). A
key whose job is gone or finished holds new jobs back for nothing: such keys are orphans.
A queue may hold thousands of keys, so they are read with SCAN and COUNT, a few calls a page,
never in one reply; the answer carries the cursor to go on from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from redis.crc import key_slot

from queues.errors import BadParameter
from queues.reads.keys import QueueRef
from queues.reads.store import on_redis
from queues.redis.clients import get_client
from queues.redis.cluster import is_cluster, node_client
from queues.redis.errors import translate_redis_errors

# Checked in BullMQ's own order (its getState script): sorted sets first, they are O(log n).
_ZSET_STATES = ("completed", "failed", "delayed", "prioritized", "waiting-children")
_LIST_STATES = (("active", "active"), ("wait", "waiting"), ("paused", "waiting"))
# A job in these states (or gone) no longer needs its deduplication key.
FINISHED = frozenset({"completed", "failed", "removed"})
# SCAN calls one page may make: a keyspace with few deduplication keys among many others
# still answers in bounded time, with a cursor to go on from.
MAX_SCANS_PER_PAGE = 20
DEFAULT_PAGE = 100
MAX_PAGE = 1000


@dataclass
class DedupKey:
    id: str
    job_id: str
    ttl_ms: int | None  # None: no expiry
    job_state: str

    @property
    def orphan(self) -> bool:
        return self.job_state in FINISHED

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "jobId": self.job_id,
            "ttl_ms": self.ttl_ms,
            "jobState": self.job_state,
            "orphan": self.orphan,
        }


@dataclass
class DedupPage:
    keys: list[DedupKey] = field(default_factory=list)
    # The SCAN cursor to read the next page from; None once the scan went round.
    next: str | None = None


def dedup_key(ref: QueueRef, dedup_id: str) -> str:
    return f"{ref.key('de')}:{dedup_id}"


def parse_cursor(text: str | None) -> int:
    if text in (None, ""):
        return 0
    if not text.isdigit():
        raise BadParameter("cursor must be the 'next' value of the previous page")
    return int(text)


async def dedup_page(ref: QueueRef, cursor: int = 0, limit: int = DEFAULT_PAGE) -> DedupPage:
    """Up to about ``limit`` keys from ``cursor`` on (SCAN may give a few more), sorted by id."""
    if not 1 <= limit <= MAX_PAGE:
        raise BadParameter(f"limit must be between 1 and {MAX_PAGE}")
    if not on_redis([ref]):
        return DedupPage()  # a Postgres store's dedup table is not listed yet
    scanner = await _scanner(ref)
    head = dedup_key(ref, "")
    names: list[str] = []
    async with translate_redis_errors():
        for _ in range(MAX_SCANS_PER_PAGE):
            cursor, batch = await scanner.scan(cursor, match=_glob(head) + "*", count=limit)
            names.extend(str(name) for name in batch)
            if cursor == 0 or len(names) >= limit:
                break
        keys = await _describe(ref, sorted(set(names)), len(head))
    return DedupPage(keys, str(cursor) if cursor else None)


async def _scanner(ref: QueueRef) -> Any:
    """What to SCAN: the connection's client, or on a Redis Cluster the master holding the
    queue's keys (a queue's keys share one slot: its name or its prefix is a hash tag)."""
    client: Any = get_client(ref.connection)
    if not is_cluster(client):
        return client
    await client.initialize()  # the slots' owners are known once it has connected
    node = client.nodes_manager.get_node_from_slot(key_slot(ref.key("de").encode()))
    return node_client(client, node)


async def _describe(ref: QueueRef, names: list[str], head: int) -> list[DedupKey]:
    """Each key's job id and time left, then each job's state (two or three round trips)."""
    if not names:
        return []
    client = get_client(ref.connection)
    async with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.get(name)
            pipe.pttl(name)
        replies = await pipe.execute(raise_on_error=False)
    found = []
    for i, name in enumerate(names):
        job_id, ttl = replies[2 * i], replies[2 * i + 1]
        if not isinstance(job_id, str):
            continue  # expired or released between SCAN and GET
        ttl_ms = ttl if isinstance(ttl, int) and ttl >= 0 else None
        found.append(DedupKey(name[head:], job_id, ttl_ms, "unknown"))
    states = await job_states(ref, [k.job_id for k in found])
    for key in found:
        key.job_state = states.get(key.job_id, "unknown")
    return found


async def job_states(ref: QueueRef, job_ids: list[str]) -> dict[str, str]:
    """Each job's state, ``removed`` when its hash is gone: the sorted sets for all in one
    round trip, then the lists (LPOS) only for the jobs in none of them."""
    ids = sorted(set(job_ids))
    if not ids:
        return {}
    client = get_client(ref.connection)
    async with client.pipeline(transaction=False) as pipe:
        for job_id in ids:
            pipe.exists(ref.job_key(job_id))
            for state in _ZSET_STATES:
                pipe.zscore(ref.key(state), job_id)
        replies = await pipe.execute(raise_on_error=False)
    width = 1 + len(_ZSET_STATES)
    states: dict[str, str] = {}
    in_list: list[str] = []
    for i, job_id in enumerate(ids):
        row = replies[i * width : (i + 1) * width]
        if not row[0]:
            states[job_id] = "removed"
            continue
        scored = zip(_ZSET_STATES, row[1:], strict=True)
        zset = next((state for state, score in scored if _is_score(score)), None)
        if zset:
            states[job_id] = zset
        else:
            in_list.append(job_id)
    if in_list:
        async with client.pipeline(transaction=False) as pipe:
            for job_id in in_list:
                for suffix, _ in _LIST_STATES:
                    pipe.lpos(ref.key(suffix), job_id)
            positions = await pipe.execute(raise_on_error=False)
        for i, job_id in enumerate(in_list):
            row = positions[i * len(_LIST_STATES) : (i + 1) * len(_LIST_STATES)]
            placed = zip(_LIST_STATES, row, strict=True)
            listed = [name for (_, name), pos in placed if isinstance(pos, int)]
            states[job_id] = listed[0] if listed else "unknown"
    return states


async def held_by(ref: QueueRef, dedup_id: str) -> tuple[str | None, int | None]:
    """The job holding ``dedup_id`` now and the key's time left in ms (None: no expiry);
    ``(None, None)`` when nobody holds it."""
    client = get_client(ref.connection)
    async with translate_redis_errors():
        async with client.pipeline(transaction=False) as pipe:
            pipe.get(dedup_key(ref, dedup_id))
            pipe.pttl(dedup_key(ref, dedup_id))
            job_id, ttl = await pipe.execute()
    if job_id is None:
        return None, None
    return str(job_id), ttl if isinstance(ttl, int) and ttl >= 0 else None


def _is_score(score: Any) -> bool:
    return score is not None and not isinstance(score, Exception)


def _glob(text: str) -> str:
    """``text`` as a literal in a SCAN pattern (queue names may hold ``*``, ``?`` or ``[``)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
