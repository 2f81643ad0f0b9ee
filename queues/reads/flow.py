"""Where a job's flow is read: its root (up through ``parentKey`` across queues and prefixes),
then down through each parent's children, level by level.

Each level down is one pipelined round trip whatever its width: per node, its fields (cut
inside Redis at the list cap, lua/read_jobs.lua), its scores in the sorted-set states, and
its children from the four places BullMQ keeps them (``:dependencies`` pending,
``:processed`` and ``:failed`` hashes, the ``:unsuccessful`` sorted set of ignored ones),
counted in full but read only up to ``max_children``. A job in none of the sorted sets and
not active is waiting (BullMQ's own check would walk the wait list for it). Each level up is
one round trip too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from queues.config.settings import get_config
from queues.errors import JobNotFound, QueueDataError
from queues.reads.detail import job_ref_from_key
from queues.reads.job_fields import job_from_hash
from queues.reads.jsontext import loads
from queues.reads.keys import QueueRef
from queues.reads.scripts import is_noscript, script
from queues.reads.store import other_store
from queues.redis import connections, fastpipe
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

DEFAULT_DEPTH = 10
MAX_DEPTH = 50
DEFAULT_MAX_CHILDREN = 50
MAX_CHILDREN = 1000
# Parents followed up at most: a longer chain is a loop some writer made.
MAX_ANCESTORS = 100
_ZSET_STATES = ("completed", "failed", "delayed", "prioritized", "waiting-children")
_FIELDS = ("name", "progress", "atm", "attemptsMade", "failedReason", "finishedOn", "parentKey")
# Children kinds, in the order a tree shows them: the ones needing a look first.
_KINDS = ("failed", "ignored", "pending", "processed")
# Commands per node in a level's pipeline besides its fields: state scores, then per kind a
# count and a first page.
_PER_NODE = len(_ZSET_STATES) + 1 + 2 * len(_KINDS)


@dataclass
class FlowNode:
    """A job of a flow tree being read; ``out`` is what the answer says of it."""

    ref: QueueRef
    id: str
    out: dict[str, Any] = field(default_factory=dict)
    parent: FlowNode | None = None


def _parent_of(
    raw: Mapping[str, str | None], connection: str | None = None
) -> tuple[QueueRef, str] | None:
    """The parent named in a job's ``parent`` JSON (queue key and id, unambiguous whatever
    the prefix), else its ``parentKey`` read with the configured prefixes. A flow lives in
    one Redis: the parent is on the child's ``connection`` (None: the default one)."""
    connection = connection or connections.default_name()
    parent = raw.get("parent")
    if parent:
        try:
            found = loads(parent)
            prefix, _, name = str(found["queueKey"]).rpartition(":")
            readable = prefix in get_config()["PREFIXES"]
            if readable and name and found.get("id") is not None:
                return QueueRef(prefix, name, connection), str(found["id"])
        except (ValueError, KeyError, TypeError):
            pass
    key = raw.get("parentKey")
    if not key:
        return None
    for prefix in sorted(get_config()["PREFIXES"], key=len, reverse=True):
        if key.startswith(prefix + ":"):
            name, sep, job_id = key[len(prefix) + 1 :].partition(":")
            if sep and name and job_id:
                return QueueRef(prefix, name, connection), job_id
    return None


async def _root(ref: QueueRef, job_id: str) -> tuple[QueueRef, str, int]:
    """The flow's root and how many levels above ``job_id`` it is (one round trip a level).
    A parent that is gone ends the walk: the tree starts at its last child still there."""
    redis = get_client(ref.connection)
    here, below, levels = (ref, job_id), (ref, job_id), 0
    while True:
        key = here[0].job_key(here[1])
        exists, fields = await fastpipe.execute(
            redis, [("EXISTS", key), ("HMGET", key, "parentKey", "parent")]
        )
        if isinstance(exists, Exception) or isinstance(fields, Exception):
            raise QueueDataError(f"Job {here[1]!r} is not a readable job hash")
        if not exists:
            if levels == 0:
                raise JobNotFound(f"No job {job_id!r} in queue {ref.slug!r}")
            return below[0], below[1], levels - 1
        up = _parent_of({"parentKey": fields[0], "parent": fields[1]}, ref.connection)
        if up is None or levels == MAX_ANCESTORS:
            return here[0], here[1], levels
        below, here, levels = here, up, levels + 1


async def _read_level(
    nodes: list[FlowNode], with_children: bool, max_children: int
) -> list[FlowNode]:
    """Fill in ``nodes`` (one round trip); their children, the next level, are returned."""
    redis = get_client(nodes[0].ref.connection if nodes else None)
    cap = int(get_config()["LIST_FIELD_CAP"])
    reader = script(redis, "read_jobs")
    by_queue: dict[QueueRef, list[int]] = {}
    for index, node in enumerate(nodes):
        by_queue.setdefault(node.ref, []).append(index)
    commands: list[tuple[Any, ...]] = []
    # One read_jobs per queue: a script's keys stay within one queue (Redis Cluster slots).
    for ref, indexes in by_queue.items():
        keys = [ref.job_key(nodes[i].id) for i in indexes]
        commands.append(("EVALSHA", reader.sha, len(keys), *keys, cap, *_FIELDS))
    for node in nodes:
        key = node.ref.job_key(node.id)
        commands.extend(("ZSCORE", node.ref.key(state), node.id) for state in _ZSET_STATES)
        commands.append(("LPOS", node.ref.key("active"), node.id))
        # Below the depth asked for, children are only counted.
        page: list[tuple[Any, ...]] = [
            ("HSCAN", f"{key}:failed", 0, "COUNT", max_children),
            ("ZRANGE", f"{key}:unsuccessful", 0, max_children - 1),
            ("SSCAN", f"{key}:dependencies", 0, "COUNT", max_children),
            ("HSCAN", f"{key}:processed", 0, "COUNT", max_children),
        ]
        counts = [
            ("HLEN", f"{key}:failed"),
            ("ZCARD", f"{key}:unsuccessful"),
            ("SCARD", f"{key}:dependencies"),
            ("HLEN", f"{key}:processed"),
        ]
        for count, first in zip(counts, page, strict=True):
            commands += [count, first] if with_children else [count]
    replies = await fastpipe.execute(redis, commands)
    if any(is_noscript(reply) for reply in replies[: len(by_queue)]):
        await redis.script_load(reader.script)
        replies = await fastpipe.execute(redis, commands)
    for (_ref, indexes), rows in zip(by_queue.items(), replies, strict=False):
        if isinstance(rows, Exception):
            raise QueueDataError(f"A job of this flow cannot be read ({rows})")
        for index, (values, cut_flat) in zip(indexes, rows, strict=True):
            nodes[index].out["_fields"] = (values, cut_flat)
    children: list[FlowNode] = []
    per_node = _PER_NODE if with_children else _PER_NODE - len(_KINDS)
    for position, node in enumerate(nodes):
        start = len(by_queue) + position * per_node
        own = replies[start : start + per_node]
        _describe(node, own)
        found = own[len(_ZSET_STATES) + 1 :]
        if with_children:
            children += _children(node, found, max_children)
        else:
            # Counts alone: each in the place a count has beside its first page.
            node.out["childCounts"] = _counts([n for count in found for n in (count, None)])
            node.out["children"] = []
            node.out["more"] = sum(node.out["childCounts"].values())
            node.out["cutAtDepth"] = node.out["more"] > 0
    return children


def _describe(node: FlowNode, own: list[Any]) -> None:
    values, cut_flat = node.out.pop("_fields")
    out = node.out
    out.update({"queue": node.ref.slug, "queueName": node.ref.name, "id": node.id})
    if cut_flat and cut_flat[0] == 0:
        out.update({"state": "unknown", "name": None, "invalid": True})
        return
    raw = {f: v for f, v in zip(_FIELDS, values, strict=True) if v is not None}
    if not raw:
        out.update({"state": "removed", "name": None})
        return
    cut = {_FIELDS[i - 1]: size for i, size in zip(cut_flat[::2], cut_flat[1::2], strict=True)}
    job = job_from_hash(node.id, raw, cut)
    state = next(
        (s for s, score in zip(_ZSET_STATES, own, strict=False) if _is_score(score)),
        "active" if isinstance(own[len(_ZSET_STATES)], int) else "waiting",
    )
    out.update(
        {
            "name": job.get("name"),
            "state": state,
            "progress": job.get("progress"),
            "attemptsMade": job.get("attemptsMade"),
            "failedReason": job.get("failedReason") or None,
        }
    )


def _is_score(reply: Any) -> bool:
    return reply is not None and not isinstance(reply, Exception)


def _counts(replies: list[Any]) -> dict[str, int]:
    return {
        kind: replies[2 * i] if isinstance(replies[2 * i], int) else 0
        for i, kind in enumerate(_KINDS)
    }


def _members(kind: str, reply: Any) -> list[str]:
    if isinstance(reply, Exception) or reply is None:
        return []
    if kind == "ignored":
        return [str(member) for member in reply]
    members = reply[1]  # a SCAN reply: cursor, then the page
    if kind in ("failed", "processed"):
        members = members[::2]  # HSCAN: field, value, field, value...
    return [str(member) for member in members]


def _children(node: FlowNode, replies: list[Any], max_children: int) -> list[FlowNode]:
    counts = _counts(replies)
    shown: list[FlowNode] = []
    kinds: dict[str, str] = {}
    for i, kind in enumerate(_KINDS):
        for key in sorted(_members(kind, replies[2 * i + 1])):
            if len(shown) >= max_children or key in kinds:
                continue
            parsed = job_ref_from_key(key, node.ref.connection)
            if parsed is None:
                continue  # a prefix this site does not read
            kinds[key] = kind
            child = FlowNode(QueueRef.from_slug(parsed["slug"]), parsed["id"], {"via": kind}, node)
            shown.append(child)
    node.out["childCounts"] = counts
    node.out["children"] = [child.out for child in shown]
    node.out["more"] = max(0, sum(counts.values()) - len(shown))
    return shown


def _within(level: list[FlowNode], room: int) -> list[FlowNode]:
    """The first ``room`` nodes of a level; the others leave their parents' children."""
    for node in level[max(0, room) :]:
        if node.parent is not None:
            siblings = node.parent.out["children"]
            siblings[:] = [out for out in siblings if out is not node.out]
            node.parent.out["more"] += 1
    return level[: max(0, room)]


def members(flow: dict[str, Any]) -> list[tuple[str, str]]:
    """Every (queue, job id) of a flow read by ``read_flow``, breadth first."""
    found, level = [], [flow["root"]]
    while level:
        found += [(node["queue"], node["id"]) for node in level]
        level = [child for node in level for child in node.get("children", [])]
    return found


async def read_flow(
    ref: QueueRef,
    job_id: str,
    depth: int = DEFAULT_DEPTH,
    max_children: int = DEFAULT_MAX_CHILDREN,
    max_nodes: int | None = None,
) -> dict[str, Any]:
    """The flow holding ``job_id``, from its root: ``{"root": node, "job": {queue, id},
    "depth", "maxChildren", "levelsAboveJob"}``. A node: queue, id, name, state, progress,
    attemptsMade, failedReason, ``via`` (which of its parent's sets holds it), ``children``
    (at most ``max_children``), ``childCounts`` by kind and ``more`` (children not shown);
    ``cutAtDepth`` when it has children below ``depth``. ``max_nodes``: at most that many
    nodes in all, breadth first (the rest are counted in their parents' ``more``)."""
    store = other_store(ref.connection)
    if store is not None:
        found: dict[str, Any] = await store.flow(ref, job_id, depth, max_children, max_nodes)
        return found
    async with translate_redis_errors():
        root_ref, root_id, above = await _root(ref, job_id)
        root = FlowNode(root_ref, root_id)
        await walk_levels(root, depth, max_children, max_nodes, _read_level)
    return flow_answer(root, ref, job_id, above, depth, max_children)


ReadLevel = Callable[[list[FlowNode], bool, int], Awaitable[list[FlowNode]]]


async def walk_levels(
    root: FlowNode, depth: int, max_children: int, max_nodes: int | None, read_level: ReadLevel
) -> None:
    """Describe ``root``'s tree a level at a time, breadth first, with ``read_level`` (one
    store's reads: it fills each node's ``out`` and answers the next level's nodes)."""
    level, read = [root], 0
    for reached in range(depth + 1):
        if max_nodes is not None:
            level = _within(level, max_nodes - read)
        if not level:
            break
        read += len(level)
        level = await read_level(level, reached < depth, max_children)


def flow_answer(
    root: FlowNode, ref: QueueRef, job_id: str, above: int, depth: int, max_children: int
) -> dict[str, Any]:
    return {
        "root": root.out,
        "job": {"queue": ref.slug, "id": job_id},
        "levelsAboveJob": above,
        "depth": depth,
        "maxChildren": max_children,
    }
