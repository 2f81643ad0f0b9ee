"""Failure signatures that first appeared in a recent window (the new_failure_signatures alert).

For each queue asked about, the newest ``RECENT`` failed jobs of the window are compared with the
newest ``BEFORE`` failed jobs older than it, by signature (failure_groups.py: the failed reason
made generic plus the top stack frame). A signature of the window that none of the older ones has
is new. Both reads are bounded: a signature last seen more than ``BEFORE`` failures before the
window counts as new again, and only what the failed set keeps is seen (``removeOnFail`` trims
it).

A failed job's signature does not change while it stays failed at the same time, so signatures
are remembered by job and failure time: once the ids are read (one round trip for every queue),
only the hashes of failures not seen before are read, as the failure groups read them (only
pieces of the last attempt's stack trace leave Redis): 500 a script call, several calls a round
trip, two round trips at once, so that a cold view's tens of thousands cost tens of round trips,
not a hundred one after another. And a queue's answer is reused for up to ``REUSE_S`` seconds
while its failure counts (read anyway by the overview, api/alerts/, /metrics) have not moved:
pages that load often cost no read at all. While the live reader vouches that no event of the
queue came (its token is part of what was asked), the answer stands for as long: the failed
set changes only with an event, and a failure leaving the window changes the counts asked with.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any

from queues.failures.failure_groups import read_failures, signature_of
from queues.reads.keys import QueueRef
from queues.redis import fastpipe, per_connection
from queues.redis.clients import get_client
from queues.redis.errors import translate_redis_errors

RECENT = 200
BEFORE = 1000
# Job hashes read by one script call (no call holds Redis long), calls sent in one round trip,
# round trips in flight at once: at most _CHUNK * _CALLS * _TRIPS jobs' reads wait in memory
# at once, 2,000 (each at most MOST_READ, 13 KB: 27 MB; under a kilobyte is usual).
_CHUNK = 500
_CALLS = 2
_TRIPS = 2
_SCORED = ("WITHSCORES", "LIMIT")
# Signatures remembered per (queue, job id, failure time in ms); the least used are forgotten
# first. A cold view of 50,000 queues (the most SPEC.md asks for) read 51,546: this holds
# twice that, about 240 bytes each (12.2 MB measured for 51,546; bench/RESULTS.md), 24 MB
# at most.
_REMEMBERED = 100_000
_known: OrderedDict[tuple[QueueRef, str, int], str] = OrderedDict()
REUSE_S = 60.0
# An answer the reader vouches for: an hour's failures have all left the window by then (the
# counts asked with have moved), and a queue removed meanwhile is forgotten.
LASTING_S = 3600.0
# Per queue: (its failure counts when read, when, the answer, the seconds it may be reused).
_answers: dict[QueueRef, tuple[Hashable, float, list[str], float]] = {}


def reset() -> None:
    _known.clear()
    _answers.clear()


async def new_signatures(
    asked: Mapping[QueueRef, Hashable],
    window_s: int,
    lasting: Collection[QueueRef] = (),
) -> dict[QueueRef, list[str]]:
    """Per queue, the signatures first seen in the last ``window_s`` seconds, newest first.
    ``asked``: each queue with what its failure counts are now; an answer of the last
    ``REUSE_S`` seconds for the same counts is given again without a read. ``lasting``: the
    queues whose ``asked`` holds the reader's token: their answers stand while it does."""
    now = time.monotonic()
    for ref in [ref for ref, kept in _answers.items() if now - kept[1] >= kept[3]]:
        del _answers[ref]
    result: dict[QueueRef, list[str]] = {}
    for ref, counts in asked.items():
        kept = _answers.get(ref)
        if kept is not None and kept[0] == counts:
            result[ref] = kept[2]
    fresh = await _read([ref for ref in asked if ref not in result], window_s)
    for ref, found in fresh.items():
        _answers[ref] = (asked[ref], now, found, LASTING_S if ref in lasting else REUSE_S)
    return {**result, **fresh}


async def _read(refs: Sequence[QueueRef], window_s: int) -> dict[QueueRef, list[str]]:
    if not refs:
        return {}
    since = int(time.time() * 1000) - window_s * 1000
    failed = [ref.key("failed") for ref in refs]
    commands: list[fastpipe.Command] = []
    for key in failed:
        commands.append(("ZREVRANGEBYSCORE", key, "+inf", since, *_SCORED, 0, RECENT))
        commands.append(("ZREVRANGEBYSCORE", key, f"({since}", "-inf", *_SCORED, 0, BEFORE))
    async with translate_redis_errors():
        replies = await per_connection.execute_for([r for r in refs for _ in (0, 1)], commands)
        windows = {
            ref: (_scored(replies[2 * index]), _scored(replies[2 * index + 1]))
            for index, ref in enumerate(refs)
        }
        learned = await _learn(
            [
                (ref, job_id, at)
                for ref, (recent, before) in windows.items()
                for job_id, at in (*recent, *before)
                if (ref, job_id, at) not in _known
            ]
        )

    def recall(entry: tuple[QueueRef, str, int]) -> str | None:
        found = learned.get(entry)
        return found if found is not None else _recall(entry)

    result: dict[QueueRef, list[str]] = {}
    for ref, (recent, before) in windows.items():
        older = {recall((ref, job_id, at)) for job_id, at in before}
        new: dict[str, None] = {}  # ordered: newest first, each once
        for job_id, at in recent:
            found = recall((ref, job_id, at))
            if found is not None and found not in older:
                new[found] = None
        result[ref] = list(new)
    return result


def _recall(entry: tuple[QueueRef, str, int]) -> str | None:
    found = _known.get(entry)
    if found is not None:
        _known.move_to_end(entry)
    return found


def _scored(reply: Any) -> list[tuple[str, int]]:
    """(member, score) pairs of a WITHSCORES reply; an error reply (a key of another type)
    reads as nothing. RESP3 answers [member, score] pairs, RESP2 a flat list."""
    if not isinstance(reply, list) or not reply:
        return []
    pairs = reply if isinstance(reply[0], list) else zip(reply[::2], reply[1::2], strict=True)
    return [(str(member), int(float(score))) for member, score in pairs]


async def _learn(unknown: list[tuple[QueueRef, str, int]]) -> dict[tuple[QueueRef, str, int], str]:
    """The signatures of ``unknown`` failures (those whose job is gone left out), remembered
    too. Returned as well: a read of more than are remembered still answers from all of them."""
    shares: dict[str, list[tuple[QueueRef, str, int]]] = {}
    for entry in unknown:
        shares.setdefault(entry[0].connection, []).append(entry)
    learned: dict[tuple[QueueRef, str, int], str] = {}
    for connection, entries in shares.items():
        await _learn_on(get_client(connection), entries, learned)
    _known.update(learned)
    while len(_known) > _REMEMBERED:
        _known.popitem(last=False)
    return learned


async def _learn_on(
    redis: Any,
    unknown: list[tuple[QueueRef, str, int]],
    learned: dict[tuple[QueueRef, str, int], str],
) -> None:
    trips = iter(range(0, len(unknown), _CHUNK * _CALLS))
    same: dict[str, str] = {}  # one string a signature: most failures share theirs

    async def reader() -> None:
        # Each takes the next trip until none is left: _TRIPS of them in flight, so that Redis
        # reads one while this process works out the signatures of another.
        for start in trips:
            trip = unknown[start : start + _CHUNK * _CALLS]
            keys = [ref.job_key(job_id) for ref, job_id, _ in trip]
            read = await read_failures(redis, keys, _CHUNK)
            for entry, failure in zip(trip, read, strict=True):
                if failure is None:
                    continue  # removed since its id was read
                found = signature_of(*failure)
                learned[entry] = same.setdefault(found, found)

    readers = [asyncio.ensure_future(reader()) for _ in range(min(_TRIPS, len(unknown)))]
    try:
        await asyncio.gather(*readers)
    except BaseException:
        for task in readers:
            task.cancel()  # one failed: the others stop too
        await asyncio.gather(*readers, return_exceptions=True)
        raise
