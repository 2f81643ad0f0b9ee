"""Finding the queues: SCAN for ``<prefix>:*:meta`` and ``<prefix>:*:id`` plus configured names.

A full SCAN walks every key (millions of jobs), so its result is kept for
``DISCOVERY_INTERVAL`` seconds and refreshed in the background while the old list is served.

Each connection is scanned on its own. With several, one that cannot be reached lists no
queues (and is named in ``unreachable``) while the others are listed; with one, its failure is
the caller's, as it always was. A Redis Cluster's masters are scanned one by one, so that one
that is down does not hide the others' queues.
"""

from __future__ import annotations

import asyncio
import operator
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

import redis.asyncio as aioredis
from redis.crc import key_slot
from redis.exceptions import ResponseError

from queues.config.settings import get_config, on_change
from queues.live import seen_queues
from queues.reads.keys import QueueRef
from queues.reads.store import other_store
from queues.redis import connections, fastpipe, reachability
from queues.redis.clients import get_client
from queues.redis.cluster import (
    is_cluster,
    masters,
    node_client,
    node_down,
    note_node_down,
    note_node_up,
)
from queues.redis.errors import reason
from queues.redis.unreachable import UNREACHABLE

_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


@dataclass(frozen=True)
class Discovered:
    queues: tuple[QueueRef, ...]
    # Queues that still hold a BullMQ 5 ``paused`` list: only these need it counted.
    legacy_paused: frozenset[QueueRef] = frozenset()
    at: float = field(default_factory=time.monotonic)
    # Connections that could not be read (with several), and why.
    unreachable: tuple[tuple[str, str], ...] = ()
    # When the scan began (ms since the epoch): queues the live reader saw created after it
    # are added to the list (seen_queues.py).
    scanned_ms: int = 0


# Per connection: its kept queue list, and the refresh running in the background.
_cache: dict[str, Discovered] = {}
_refreshing: dict[str, asyncio.Task[Discovered]] = {}
# The last merge of several connections' lists, and the lists it was made of.
_merged: tuple[tuple[Discovered, ...], Discovered] | None = None
# Per connection: when the live reader's finds were last read (monotonic), and the queues
# destroyed here since the scan, with when (ms): a find older than that is not listed again.
_seen_read_at: dict[str, float] = {}
_forgotten: dict[str, dict[QueueRef, int]] = {}
# The live reader's finds are read at most this often per process (one ZRANGEBYSCORE).
SEEN_READ_EVERY = 0.5


@on_change
def reset() -> None:
    """Forget the kept queue lists: the settings they were scanned with changed."""
    global _merged
    _cache.clear()
    _refreshing.clear()
    _merged = None
    _seen_read_at.clear()
    _forgotten.clear()
    _sets.clear()


def forget(ref: QueueRef) -> None:
    """The queue was destroyed: leave it out of the kept list (a later scan finds it if it is
    written to again), so that the overview does not list it until the next scan."""
    cached = _cache.get(ref.connection)
    if cached is None or ref not in cached.queues:
        return
    if ref in {QueueRef.from_slug(name) for name in get_config()["QUEUES"]}:
        return  # configured queues are always listed
    _forgotten.setdefault(ref.connection, {})[ref] = seen_queues.now_ms()
    _cache[ref.connection] = replace(
        cached,
        queues=tuple(q for q in cached.queues if q != ref),
        legacy_paused=cached.legacy_paused - {ref},
    )


def escape_glob(text: str) -> str:
    return _GLOB_SPECIAL.sub(r"\\\1", text)


def split_key(prefix: str, key: str) -> tuple[str, str] | None:
    """``(name, suffix)`` of a ``<prefix>:<name>:<suffix>`` key whose name holds no ``:``."""
    head = prefix + ":"
    if not key.startswith(head):
        return None
    name, sep, suffix = key[len(head) :].rpartition(":")
    if not sep or not name or ":" in name:
        return None
    return name, suffix


def queue_name_of_key(prefix: str, key: str) -> str | None:
    """The queue name of a ``<prefix>:<name>:meta`` or ``...:id`` key, or None for any other key
    the pattern let through (job ids starting with ``id``/``me``, names holding ``:``)."""
    parts = split_key(prefix, key)
    return parts[0] if parts and parts[1] in ("meta", "id") else None


async def scan_queues(redis: aioredis.Redis, prefix: str, count: int) -> tuple[set[str], set[str]]:
    """The queues under ``prefix``, and those of them that still hold a BullMQ 5 ``paused``
    list (found by the same walk: no EXISTS per queue, which thousands of queues would cost)."""
    # One pass: ``[imp][dea]*`` admits ``:meta``, ``:id`` and ``:paused``; the few other keys
    # it admits (``:marker``, job ids starting so) are dropped by split_key's callers.
    pattern = f"{escape_glob(prefix)}:*:[imp][dea]*"
    names: set[str] = set()
    paused_lists: set[str] = set()
    async for key in redis.scan_iter(match=pattern, count=count):
        parts = split_key(prefix, key)
        if parts is None:
            continue
        name, suffix = parts
        if suffix in ("meta", "id"):
            names.add(name)
        elif suffix == "paused":
            paused_lists.add(name)
    return names, paused_lists & names


def _fields(ref: QueueRef) -> tuple[str, str, str]:
    """What QueueRef's order compares, as a key: its own comparisons are slow at 50,000."""
    return ref.prefix, ref.name, ref.connection


def add_seen(connection: str, refs: list[QueueRef]) -> None:
    """The live reader saw ``refs`` created: list them now, not after the next scan."""
    cached = _cache.get(connection)
    if cached is None:
        return  # the first scan lists them
    listed = set(cached.queues)
    new = [ref for ref in refs if ref not in listed and ref.connection == connection]
    if new:
        _cache[connection] = replace(cached, queues=tuple(sorted(listed.union(new), key=_fields)))
    for ref in new:
        _forgotten.get(connection, {}).pop(ref, None)


# The last list's queues as a set, made once per list: the reader's finds since the scan are
# looked up in it every ``SEEN_READ_EVERY`` seconds, and 50,000 queues make a set slowly.
_sets: dict[str, tuple[Discovered, frozenset[QueueRef]]] = {}


def _listed(connection: str, cached: Discovered) -> frozenset[QueueRef]:
    kept = _sets.get(connection)
    if kept is None or kept[0] is not cached:
        kept = _sets[connection] = (cached, frozenset(cached.queues))
    return kept[1]


async def _with_seen(connection: str, cached: Discovered) -> Discovered:
    """``cached`` with the queues the live reader (of any process) saw created since its
    scan, and without those it saw obliterated since, read from Redis at most every
    ``SEEN_READ_EVERY`` seconds."""
    if other_store(connection) is not None:
        return cached  # the live reader's finds are kept for Redis connections
    now = time.monotonic()
    if now - _seen_read_at.get(connection, -SEEN_READ_EVERY) < SEEN_READ_EVERY:
        return cached
    _seen_read_at[connection] = now
    try:
        seen, gone = await seen_queues.seen_since(
            get_client(connection), connection, cached.scanned_ms
        )
    except (*UNREACHABLE, ResponseError):
        return cached  # the scan's list stands; the caller's own reads say what is wrong
    for ref, at in gone.items():
        if at >= seen.get(ref, 0):  # not created again since
            forget(ref)
    cached = _cache.get(connection, cached)
    if not seen:
        return cached
    forgotten = _forgotten.get(connection, {})
    listed = _listed(connection, cached)
    new = [ref for ref, at in seen.items() if ref not in listed and at > forgotten.get(ref, 0)]
    if not new:
        return cached
    found = replace(cached, queues=tuple(sorted(listed.union(new), key=_fields)))
    _cache[connection] = found
    return found


async def _scan(connection: str, redis: aioredis.Redis) -> tuple[set[QueueRef], set[QueueRef]]:
    config = get_config()
    refs: set[QueueRef] = set()
    legacy: set[QueueRef] = set()
    for prefix in config["PREFIXES"]:
        names, paused_lists = await scan_queues(redis, prefix, int(config["SCAN_COUNT"]))
        refs.update(QueueRef(prefix, name, connection) for name in names)
        legacy.update(QueueRef(prefix, name, connection) for name in paused_lists)
    return refs, legacy


async def _scan_cluster(connection: str, cluster: Any) -> tuple[set[QueueRef], set[QueueRef]]:
    """A Redis Cluster's queues, each master scanned on its own: one that cannot be reached
    keeps the queues the last scan found in its slots (their reads then say they cannot be
    read), and the others' are found as usual. Raised only when no master answers."""
    refs: set[QueueRef] = set()
    legacy: set[QueueRef] = set()
    kept = _cache.get(connection)
    failure: BaseException | None = None
    nodes = await masters(cluster)
    for node in nodes:
        try:
            found, paused = await _scan(connection, node_client(cluster, node))
        except UNREACHABLE as error:
            failure = error
            note_node_down(cluster, node.name, reason(error))
            if kept is not None:
                lost = {ref for ref in kept.queues if _node_of(cluster, ref) == node.name}
                refs.update(lost)
                legacy.update(kept.legacy_paused & lost)
            continue
        note_node_up(cluster, node.name)
        refs.update(found)
        legacy.update(paused)
    if failure is not None and all(node_down(cluster, node.name) for node in nodes):
        raise failure
    return refs, legacy


def _node_of(cluster: Any, ref: QueueRef) -> str:
    return str(cluster.nodes_manager.get_node_from_slot(key_slot(ref.key("meta").encode())).name)


async def _discover(connection: str) -> Discovered:
    store = other_store(connection)
    if store is not None:
        listed: Discovered = await store.discover(connection)
        return listed
    scanned_ms = seen_queues.now_ms()
    config = get_config()
    redis = get_client(connection)
    if is_cluster(redis):
        refs, legacy = await _scan_cluster(connection, redis)
    else:
        refs, legacy = await _scan(connection, redis)
    configured = {
        ref
        for ref in (QueueRef.from_slug(slug) for slug in config["QUEUES"])
        if ref.connection == connection
    } - refs
    ordered = tuple(sorted(refs | configured, key=_fields))
    if configured:
        # Configured queues the scan did not find may still have a paused list of their own
        # (one whose Cluster master is down answers an error: it is not counted as having one).
        asked = sorted(configured)
        found = await fastpipe.execute(redis, [("EXISTS", ref.key("paused")) for ref in asked])
        legacy.update(ref for ref, has in zip(asked, found, strict=True) if has == 1)
    return Discovered(queues=ordered, legacy_paused=frozenset(legacy), scanned_ms=scanned_ms)


async def _refresh(connection: str) -> Discovered:
    found = await _discover(connection)
    was = _cache.get(connection)
    if was is not None:
        found = replace(found, queues=_same_objects(was.queues, found.queues))
    _cache[connection] = found
    _forgotten.pop(connection, None)  # the scan saw what is there now
    return found


def _same_objects(was: tuple[QueueRef, ...], found: tuple[QueueRef, ...]) -> tuple[QueueRef, ...]:
    """``found`` with each queue ``was`` listed as the object listed then, and ``was`` itself
    when no queue came or went: views and the live reader keep what they worked out for a list
    of 50,000 queues while it is the same one, told by identity (equality is a Python call a
    queue)."""
    listed = {_fields(ref): ref for ref in was}
    same = tuple([listed.get(_fields(ref), ref) for ref in found])
    if len(same) == len(was) and all(map(operator.is_, same, was)):
        return was
    return same


async def discovered_on(connection: str) -> Discovered:
    """One connection's queue list; a stale list is served while one refresh runs in the
    background."""
    interval = float(get_config()["DISCOVERY_INTERVAL"])
    cached = _cache.get(connection)
    if cached is None or interval <= 0:
        return await _refresh(connection)
    running = _refreshing.get(connection)
    if time.monotonic() - cached.at > interval and (running is None or running.done()):
        task = asyncio.ensure_future(_refresh(connection))
        task.add_done_callback(_swallow)
        _refreshing[connection] = task
    return await _with_seen(connection, cached)


async def discovered() -> Discovered:
    """Every connection's queues; with several, those that cannot be read are named in
    ``unreachable`` instead."""
    names = connections.names()
    if len(names) == 1:
        return await discovered_on(names[0])
    found = tuple(await asyncio.gather(*(_discovered_or_unreachable(name) for name in names)))
    global _merged
    if _merged is not None and len(_merged[0]) == len(found):
        if all(kept is part for kept, part in zip(_merged[0], found, strict=True)):
            return _merged[1]  # the same lists: the same object, which callers' caches know
    merged = Discovered(
        queues=tuple(sorted((ref for part in found for ref in part.queues), key=_fields)),
        legacy_paused=frozenset(ref for part in found for ref in part.legacy_paused),
        at=min(part.at for part in found),
        unreachable=tuple(pair for part in found for pair in part.unreachable),
    )
    _merged = (found, merged)
    return merged


async def _discovered_or_unreachable(connection: str) -> Discovered:
    if reachability.skip(connection):
        detail = reachability.unreachable().get(connection, "")
        return Discovered(queues=(), unreachable=((connection, detail),))
    try:
        return await discovered_on(connection)
    except UNREACHABLE as error:
        reachability.note_down(connection, reason(error))
        return Discovered(queues=(), unreachable=((connection, reason(error)),))


def _swallow(task: asyncio.Task[Discovered]) -> None:
    # A failed background refresh keeps the old list; the next request tries again.
    if not task.cancelled():
        task.exception()


async def known(ref: QueueRef) -> bool:
    """Whether the queue exists: in the list, or (created since the last scan) in Redis."""
    found = await discovered_on(ref.connection)
    if ref in found.queues:
        return True
    if ":" in ref.name or ref.prefix not in get_config()["PREFIXES"]:
        return False
    store = other_store(ref.connection)
    if store is not None:
        return await store.exists(ref)
    return bool(await get_client(ref.connection).exists(ref.key("meta"), ref.key("id")))
