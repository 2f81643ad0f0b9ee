"""Counts of every state, and the meta hash, for all queues in one pipelined round trip
(one per ``READ_BATCH`` queues past it).

Per queue: 7 counts + 1 HMGET of meta = 8 commands (9 for a queue that still holds a
BullMQ 5 ``paused`` list); fewer for a reader that names the states it needs (the alert
sender): the others then count 0. With several connections each one's queues are read on its own
client, at the same time; one that cannot be reached is left out (queues/redis/reachability.py
says which) so that the others are still shown.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from queues.config.settings import on_change
from queues.errors import NodeUnreachable, RedisUnavailable
from queues.reads.discovery import Discovered, discovered, discovered_on
from queues.reads.keys import STATES, QueueRef
from queues.reads.store import other_store
from queues.redis import connections, fastpipe, reachability
from queues.redis.clients import get_client
from queues.redis.errors import reason, translate_redis_errors
from queues.redis.fastpipe import Command
from queues.redis.per_connection import by_connection
from queues.redis.unreachable import UNREACHABLE

META_FIELDS = ("paused", "concurrency", "max", "duration", "opts.maxLenEvents", "version")
# Queues one round trip reads at most (about 9 commands each).
READ_BATCH = 5000


@dataclass(frozen=True)
class QueueSummary:
    ref: QueueRef
    counts: dict[str, int]
    paused: bool
    global_concurrency: int | None
    rate_limit: tuple[int, int] | None  # (max jobs, per duration ms)
    version: str | None
    problems: tuple[str, ...] = ()
    # Why the queue could not be read while others of its connection were (its Redis Cluster
    # master is down), or None: such a summary holds no counts and is not listed.
    unreachable: str | None = None

    def as_json(self, slug: str | None = None) -> dict[str, Any]:
        """``slug``: the queue's, when the caller has it already."""
        return {
            "name": self.ref.name,
            "prefix": self.ref.prefix,
            "slug": self.ref.slug if slug is None else slug,
            "connection": self.ref.connection,
            "paused": self.paused,
            "counts": self.counts,
            "globalConcurrency": self.global_concurrency,
            "rateLimit": (
                {"max": self.rate_limit[0], "duration": self.rate_limit[1]}
                if self.rate_limit
                else None
            ),
            "version": self.version,
            "problems": list(self.problems),
        }


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


@dataclass(frozen=True)
class _Request:
    """One queue's commands, their RESP, and the states they answer in order."""

    commands: tuple[Command, ...]
    packed: bytes
    answered: tuple[str, ...]


# Made once per queue: thousands of queues, read on every overview, would otherwise cost
# a tuple, a key and an encoding per command per read. Bounded: forgotten whole when full.
_requests: dict[tuple[QueueRef, bool, frozenset[str] | None], _Request] = {}
_REQUESTS_KEPT = 200_000  # above 50,000 queues read both ways (every state, the rules')


def _queue_request(
    ref: QueueRef, legacy_paused: bool, states: frozenset[str] | None = None
) -> _Request:
    kept = _requests.get((ref, legacy_paused, states))
    if kept is not None:
        return kept
    commands: list[Command] = []
    answered: list[str] = []
    for state, (suffix, kind) in STATES.items():
        if state == "paused" and not legacy_paused:
            continue
        if states is not None and state not in states:
            continue
        commands.append(("LLEN" if kind == "list" else "ZCARD", ref.key(suffix)))
        answered.append(state)
    commands.append(("HMGET", ref.key("meta"), *META_FIELDS))
    made = _Request(tuple(commands), fastpipe.pack_uncached(commands), tuple(answered))
    if len(_requests) >= _REQUESTS_KEPT:
        _requests.clear()
    _requests[(ref, legacy_paused, states)] = made
    return made


@on_change
def _forget_requests() -> None:
    _requests.clear()  # the key prefix or the queues' settings changed


def _summary(ref: QueueRef, states: tuple[str, ...], replies: list[Any]) -> QueueSummary:
    counts = {state: 0 for state in STATES}
    lost = next((reply for reply in replies if isinstance(reply, UNREACHABLE)), None)
    if lost is not None:
        return QueueSummary(ref, counts, False, None, None, None, unreachable=reason(lost))
    problems: list[str] = []
    for state, value in zip(states, replies, strict=False):
        if isinstance(value, Exception):
            problems.append(f"{state}: {value}")
        else:
            counts[state] = int(value or 0)
    meta_reply = replies[len(states)]
    if isinstance(meta_reply, Exception):
        problems.append(f"meta: {meta_reply}")
        meta_reply = [None] * len(META_FIELDS)
    meta = dict(zip(META_FIELDS, meta_reply, strict=False))
    max_jobs, duration = _int_or_none(meta["max"]), _int_or_none(meta["duration"])
    return QueueSummary(
        ref=ref,
        counts=counts,
        paused=meta["paused"] not in (None, "", "0"),
        global_concurrency=_int_or_none(meta["concurrency"]),
        rate_limit=(max_jobs, duration) if max_jobs and duration else None,
        version=meta["version"],
        problems=tuple(problems),
    )


# Summaries a caller already knows without a read (the live reader's), by queue.
Known = Callable[[list[QueueRef]], Mapping[QueueRef, QueueSummary]]


async def summaries(
    refs: list[QueueRef] | None = None,
    *,
    states: frozenset[str] | None = None,
    known: Known | None = None,
) -> list[QueueSummary]:
    """Summaries of ``refs`` (default: every discovered queue), in one round trip per
    connection. Every queue's: with several connections, those of one that cannot be reached
    are left out (queues/redis/reachability.py names it). ``states``: count only these (the
    others count 0), for a reader that needs a few at thousands of queues. ``known``: the
    summaries of the queues it names are taken as they are, only the others are read."""
    if refs is None:
        async with translate_redis_errors():
            found: Discovered = await discovered()
        everywhere = connections.several()
        every = list(found.queues)
        have = known(every) if known is not None else {}
        if not have:
            return await read_summaries(
                every, found.legacy_paused, partial=everywhere, states=states
            )
        if len(have) == len(every) and all(map(operator.is_, have, every)):
            return list(have.values())  # every queue known, in order: no look-up each
        rest = [ref for ref in every if ref not in have]
        read = await read_summaries(rest, found.legacy_paused, partial=everywhere, states=states)
        merged = dict(have)
        merged.update((item.ref, item) for item in read)
        return [merged[ref] for ref in every if ref in merged]
    # Only the named queues' connections are asked: another one being down is not theirs.
    legacy_paused: frozenset[QueueRef] = frozenset()
    async with translate_redis_errors():
        for connection in {ref.connection for ref in refs}:
            legacy_paused |= (await discovered_on(connection)).legacy_paused
    found_now = await read_summaries(refs, legacy_paused, states=states)
    if len(found_now) < len(refs):
        # A named queue whose Cluster master is down: its page cannot be shown without it.
        lost = reachability.queues_down()
        missing = next(ref for ref in refs if ref not in {item.ref for item in found_now})
        raise RedisUnavailable(f"Redis is unreachable: {lost.get(missing, missing.slug)}")
    return found_now


async def read_summaries(
    refs: list[QueueRef],
    legacy_paused: frozenset[QueueRef] = frozenset(),
    *,
    partial: bool = False,
    states: frozenset[str] | None = None,
) -> list[QueueSummary]:
    """Summaries of ``refs``, without consulting discovery: one pipelined round trip per
    connection. ``partial``: the queues of a connection that cannot be reached are left out
    rather than the failure raised. Queues of a Redis Cluster master that is down are left out
    while the other masters' are read (queues/reachability.py names them)."""
    if not refs:
        return []
    read = await _read_summaries(refs, legacy_paused, partial=partial, states=states)
    reachability.note_queues(
        [item.ref for item in read if item.unreachable is None],
        {item.ref: item.unreachable for item in read if item.unreachable is not None},
    )
    return [item for item in read if item.unreachable is None]


async def _read_summaries(
    refs: list[QueueRef],
    legacy_paused: frozenset[QueueRef],
    *,
    partial: bool,
    states: frozenset[str] | None,
) -> list[QueueSummary]:
    shares = by_connection(refs)
    if not partial:
        parts = await asyncio.gather(
            *(_read_on(name, share, legacy_paused, states) for name, share in shares.items())
        )
        if len(parts) == 1:
            return parts[0]
        read = {summary.ref: summary for part in parts for summary in part}
        return [read[ref] for ref in refs]
    found = await asyncio.gather(
        *(_read_or_leave_out(name, share, legacy_paused, states) for name, share in shares.items())
    )
    read = {summary.ref: summary for part in found for summary in part}
    return [read[ref] for ref in refs if ref in read]


async def _read_or_leave_out(
    connection: str,
    refs: list[QueueRef],
    legacy_paused: frozenset[QueueRef],
    states: frozenset[str] | None,
) -> list[QueueSummary]:
    if reachability.skip(connection):
        return []
    try:
        found = await _read_on(connection, refs, legacy_paused, states)
    except UNREACHABLE as error:
        reachability.note_down(connection, reason(error))
        return []
    reachability.note_up(connection)
    return found


async def _read_on(
    connection: str,
    refs: list[QueueRef],
    legacy_paused: frozenset[QueueRef],
    states: frozenset[str] | None = None,
) -> list[QueueSummary]:
    store = other_store(connection)
    if store is not None:
        return await store.summaries(connection, refs)
    if len(refs) > READ_BATCH:
        # Round trips that each answer within REDIS_TIMEOUT, one after another: one of
        # 50,000 queues' 450,000 commands does not, on a loaded machine.
        found: list[QueueSummary] = []
        for start in range(0, len(refs), READ_BATCH):
            batch = refs[start : start + READ_BATCH]
            found += await _read_on(connection, batch, legacy_paused, states)
        return found
    plan = [(ref, _queue_request(ref, ref in legacy_paused, states)) for ref in refs]
    commands = [command for _ref, request in plan for command in request.commands]
    packed = b"".join(request.packed for _ref, request in plan)
    try:
        async with translate_redis_errors():
            # Error replies (a hand-made key of the wrong type) come back in place, not raised:
            # one odd queue must not blank the whole overview.
            replies = await fastpipe.execute(get_client(connection), commands, packed)
    except NodeUnreachable as error:
        # Every queue asked lives on Redis Cluster masters that are down (others are up).
        replies = [error] * len(commands)
    result: list[QueueSummary] = []
    position = 0
    for ref, request in plan:
        width = len(request.answered) + 1
        result.append(_summary(ref, request.answered, replies[position : position + width]))
        position += width
    return result


async def summary(ref: QueueRef) -> QueueSummary:
    return (await summaries([ref]))[0]
