"""Searching many queues at once, queue by queue, with the bounded scan of queues/search/scan.py and
one budget of jobs shared by the whole search.

The sizes of the states asked for are read first, a few hundred queues per round trip (each an
O(1) LLEN or ZCARD), so that the empty states of thousands of quiet queues cost nothing more.
Only states holding jobs are scanned, in steps of one range read and one capped read of those
jobs' hashes, sized by one ``Pace`` for the whole search (queues/search/step_pace.py) so that a step
takes a few milliseconds whatever the jobs hold; other requests and searches go between
steps. Matches, each queue's end and
progress are yielded as they come; the caller may stop at any time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from queues.config.settings import get_config
from queues.errors import QueueNotFound, StoreUnavailable
from queues.reads.keys import STATES, QueueRef
from queues.reads.store import other_store
from queues.redis import per_connection
from queues.redis.errors import reason, translate_redis_errors
from queues.redis.unreachable import UNREACHABLE
from queues.search.query.parser import Query
from queues.search.scan import MAX_BUDGET, ScanProgress, parse_query, search
from queues.search.step_pace import Pace

# Size reads sent in one round trip: each is O(1), together well under a millisecond of Redis.
SIZES_PER_TRIP = 1000


@dataclass(frozen=True)
class Match:
    ref: QueueRef
    state: str
    job: dict[str, Any]
    field: str  # where the query matched: "name", "data", "failedReason", "id", "data.<path>"


@dataclass(frozen=True)
class QueueDone:
    """One queue scanned (every state asked for), with what it held."""

    ref: QueueRef
    scanned: int
    matched: int
    by_state: dict[str, int]  # matches per state


@dataclass(frozen=True)
class QueueSkipped:
    """A queue that could not be read (its Redis Cluster master is down, or its connection
    among several): left out of the search, and why."""

    ref: QueueRef
    error: str


@dataclass(frozen=True)
class Progress:
    queues_done: int
    queues_total: int
    scanned: int
    matched: int
    done: bool = False
    truncated: bool = False  # the budget ran out before every job was read
    full: bool = False  # ended at the most matches asked for
    skipped: int = 0  # jobs a data.<path> query could not look into


@dataclass
class _Tally:
    scanned: int = 0
    matched: int = 0
    skipped: int = 0
    queues_done: int = 0
    truncated: bool = False
    full: bool = False
    by_state: dict[str, int] = field(default_factory=dict)


async def state_sizes(
    refs: Sequence[QueueRef], states: Sequence[str]
) -> list[dict[str, int] | QueueSkipped]:
    """Jobs in each of ``states`` of each queue, in the order of ``refs``; a queue that cannot
    be read while others can is answered with why. A Postgres store's queues are counted by
    BullMQ's ``get_counts``, one round trip per store."""
    found: dict[QueueRef, dict[str, int] | QueueSkipped] = {}
    for connection in sorted({ref.connection for ref in refs}):
        store = other_store(connection)
        if store is None:
            continue
        mine = [ref for ref in refs if ref.connection == connection]
        try:
            sized = await store.state_sizes(mine, list(states))
        except StoreUnavailable as error:
            found.update((ref, QueueSkipped(ref, str(error))) for ref in mine)
        else:
            found.update(zip(mine, sized, strict=True))
    on_redis = [ref for ref in refs if ref not in found]
    sizes = await _redis_sizes(on_redis, states) if on_redis else []
    found.update(zip(on_redis, sizes, strict=True))
    return [found[ref] for ref in refs]


async def _redis_sizes(
    refs: Sequence[QueueRef], states: Sequence[str]
) -> list[dict[str, int] | QueueSkipped]:
    commands = [
        ("LLEN" if STATES[state][1] == "list" else "ZCARD", ref.key(STATES[state][0]))
        for ref in refs
        for state in states
    ]
    replies: list[Any] = []
    async with translate_redis_errors():
        for start in range(0, len(commands), SIZES_PER_TRIP):
            batch = commands[start : start + SIZES_PER_TRIP]
            owners = [refs[i // len(states)] for i in range(start, start + len(batch))]
            replies += await per_connection.execute_for(owners, batch)
    sizes: list[dict[str, int] | QueueSkipped] = []
    for index in range(len(refs)):
        row = replies[index * len(states) : (index + 1) * len(states)]
        lost = next((reply for reply in row if isinstance(reply, UNREACHABLE)), None)
        if lost is not None:
            sizes.append(QueueSkipped(refs[index], reason(lost)))
            continue
        # A key of another type (a stray key, not a queue's) reads as empty.
        sizes.append({s: r if isinstance(r, int) else 0 for s, r in zip(states, row, strict=True)})
    return sizes


async def search_queues(
    refs: Sequence[QueueRef],
    states: Sequence[str],
    raw_query: str,
    *,
    budget: int | None = None,
    max_matches: int | None = None,
    pace: Pace | None = None,
) -> AsyncIterator[Match | QueueDone | QueueSkipped | Progress]:
    query = parse_query(raw_query)  # a bad query fails before anything is read
    limit = min(int(budget or get_config()["SEARCH_BUDGET"]), MAX_BUDGET)
    tally = _Tally()
    pace = pace or Pace()
    batch_size = max(1, SIZES_PER_TRIP // max(1, len(states)))
    for start in range(0, len(refs), batch_size):
        if tally.truncated or tally.full:
            break
        batch = refs[start : start + batch_size]
        for ref, sizes in zip(batch, await state_sizes(batch, states), strict=True):
            if tally.truncated or tally.full:
                break
            if isinstance(sizes, QueueSkipped):
                tally.queues_done += 1
                yield sizes
                continue
            tally.by_state = {}
            before = (tally.scanned, tally.matched)
            for state in states:
                if not sizes[state]:
                    continue
                if tally.scanned >= limit:
                    tally.truncated = True
                    break
                scan = _scan_state(ref, state, query, limit, pace, max_matches, tally)
                async for item in scan:
                    if isinstance(item, ScanProgress):
                        yield _progress(tally, len(refs))
                    else:
                        yield Match(ref, state, item, query.matched_in(item) or "")
                if tally.full:
                    break
            tally.queues_done += 1
            yield QueueDone(
                ref, tally.scanned - before[0], tally.matched - before[1], dict(tally.by_state)
            )
            yield _progress(tally, len(refs))
    yield Progress(
        tally.queues_done,
        len(refs),
        tally.scanned,
        tally.matched,
        done=True,
        truncated=tally.truncated,
        full=tally.full,
        skipped=tally.skipped,
    )


async def _scan_state(
    ref: QueueRef,
    state: str,
    query: Query,
    limit: int,
    pace: Pace,
    max_matches: int | None,
    tally: _Tally,
) -> AsyncIterator[dict[str, Any] | ScanProgress]:
    """One state's scan, counted into ``tally`` as it goes."""
    base_scanned, base_skipped = tally.scanned, tally.skipped
    left = max_matches - tally.matched if max_matches else None
    try:
        async for item in search(
            ref,
            state,
            query.source,
            budget=limit - tally.scanned,
            max_matches=left,
            pace=pace,
            parsed=query,
        ):
            if isinstance(item, ScanProgress):
                tally.scanned = base_scanned + item.scanned
                tally.skipped = base_skipped + item.skipped
                if item.done:
                    tally.full = item.full
                    tally.truncated = tally.truncated or (
                        not item.full and item.scanned < item.total
                    )
            else:
                tally.matched += 1
                tally.by_state[state] = tally.by_state.get(state, 0) + 1
            yield item
    except QueueNotFound:
        return  # removed since the list was read: nothing to find there


def _progress(tally: _Tally, queues_total: int) -> Progress:
    return Progress(
        tally.queues_done, queues_total, tally.scanned, tally.matched, skipped=tally.skipped
    )
