"""Reading a queue's spans of one tier, each span missing there made from the finer tier
(the open hour from its minutes, the open day from its hours): a read never waits for a
roll-up, and one roll-up lost (a Redis restart) is made up from what it rolls up."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from queues.history.packed import (
    PackedRecord,
    added,
    added_names,
    loads_names,
    loads_total,
    unpacked,
)
from queues.history.record import NameRecord, Span, loads_span, merged
from queues.history.storage import (
    ALONE,
    DAY_MS,
    HOUR_MS,
    MINUTE_MS,
    SKETCH_KEPT_MS,
    SKETCH_TTL_S,
    TIERS,
    finer,
    span_keys,
)
from queues.reads.keys import QueueRef
from queues.reads.store import on_redis
from queues.redis import fastpipe, per_connection
from queues.redis.clients import get_client
from queues.redis.cluster import is_cluster

# At most this many keys in one MGET of several queues' (a bigger one holds Redis up longer).
MGET_KEYS = 2000
# A span asked for: its tier and its start (ms).
Ask = tuple[str, int]
T = TypeVar("T")


async def mget(ref: QueueRef, keys: list[str]) -> list[Any]:
    if not keys:
        return []
    (reply,) = await fastpipe.execute(get_client(ref.connection), [("MGET", *keys)])
    if isinstance(reply, Exception):
        raise reply
    return list(reply)


async def mget_each(refs: Sequence[QueueRef], keys: Sequence[list[str]]) -> list[Any]:
    """Each queue's values of its ``keys``, in one round trip per connection: a list of values
    per queue, or the error its read met (an unreachable connection among several). On one
    Redis several queues' keys go in one ``MGET`` (up to ``MGET_KEYS``); on a Redis Cluster,
    where a queue's keys share no slot with another's, one ``MGET`` a queue."""
    batches: list[tuple[str, list[int], list[str]]] = []  # connection, queues, their keys
    open_batch: dict[str, tuple[str, list[int], list[str]]] = {}
    recorded = set(on_redis(refs))  # history is recorded from Redis' event streams alone
    for index, wanted in enumerate(keys):
        if not wanted or refs[index] not in recorded:
            continue
        connection = refs[index].connection
        batch = open_batch.get(connection)
        if batch is None or len(batch[2]) + len(wanted) > MGET_KEYS:
            batch = (connection, [], [])
            batches.append(batch)
            if not is_cluster(get_client(connection)):
                open_batch[connection] = batch
        batch[1].append(index)
        batch[2].extend(wanted)
    replies = await per_connection.execute(
        [connection for connection, _, _ in batches],
        [("MGET", *batch_keys) for _, _, batch_keys in batches],
    )
    # A queue not read (not recorded) has none of its keys, as MGET would say.
    found: list[Any] = [[None] * len(wanted) for wanted in keys]
    for (_, indexes, _), reply in zip(batches, replies, strict=True):
        at = 0
        for index in indexes:
            count = len(keys[index])
            found[index] = reply if isinstance(reply, BaseException) else reply[at : at + count]
            at += count
    return found


def _finer_parts(ask: Ask, now_ms: int) -> list[Ask] | None:
    """The finer tier's spans a missing span is made from; None when there are none to read
    (no finer tier, or its sketches are gone by now)."""
    tier, start = ask
    sub = finer(tier)
    if sub is None:
        return None
    size, sub_size, sub_kept_ms = TIERS[tier][0], TIERS[sub][0], SKETCH_TTL_S[sub] * 1000
    if start + size <= now_ms - sub_kept_ms:
        return None
    return [(sub, s) for s in range(start, start + size, sub_size) if s <= now_ms]


def _total_parts(ask: Ask, now_ms: int) -> list[Ask] | None:
    """:func:`_finer_parts` of a queue's records: an hour's or a day's record stored alone
    (storage.ALONE) first; missing, a closed one's span (rolled up before records were stored
    alone, or its roll-up not written yet), an open one's finer records."""
    tier, start = ask
    if tier in _SPAN_OF:
        tier = _SPAN_OF[tier]
        if start + TIERS[tier][0] <= now_ms:
            return [(tier, start)]
    parts = _finer_parts((tier, start), now_ms)
    return None if parts is None else [(ALONE.get(t, t), s) for t, s in parts]


_SPAN_OF = {alone: tier for tier, alone in ALONE.items()}


async def read_of(
    asks: Mapping[QueueRef, Sequence[Ask]],
    now_ms: int,
    load: Callable[[Any], T],
    merge: Callable[[list[T]], T],
    parts_of: Callable[[Ask, int], list[Ask] | None] = _finer_parts,
) -> dict[QueueRef, dict[Ask, T] | BaseException]:
    """The spans asked of several queues, by (tier, start), each stored one read by ``load``,
    in one round trip per connection, and one more for the spans missing ones are made from
    with ``merge`` (``parts_of``: the open hour from its minutes, the open day from its hours,
    then the open hour's minutes). A queue whose read failed gets the error instead."""
    refs = [ref for ref, wanted in asks.items() if wanted]
    replies = await mget_each(refs, [span_keys(ref, asks[ref]) for ref in refs])
    out: dict[QueueRef, dict[Ask, T] | BaseException] = {ref: {} for ref in asks}
    made: dict[QueueRef, dict[Ask, list[Ask]]] = {}
    for ref, reply in zip(refs, replies, strict=True):
        if isinstance(reply, BaseException):
            out[ref] = reply
            continue
        found: dict[Ask, T] = {}
        for ask, raw in zip(asks[ref], reply, strict=True):
            if raw is not None:
                found[ask] = load(raw)
            elif (parts := parts_of(ask, now_ms)) is not None:
                made.setdefault(ref, {})[ask] = parts
        out[ref] = found
    if not made:
        return out
    subs = await read_of(
        {ref: [p for parts in each.values() for p in parts] for ref, each in made.items()},
        now_ms,
        load,
        merge,
        parts_of,
    )
    for ref, each in made.items():
        sub, found_ref = subs[ref], out[ref]
        if isinstance(sub, BaseException):
            out[ref] = sub
        elif not isinstance(found_ref, BaseException):
            for ask, parts in each.items():
                found_ref[ask] = merge([sub[p] for p in parts if p in sub])
    return out


async def read_spans_of(
    asks: Mapping[QueueRef, Sequence[Ask]], now_ms: int, only: frozenset[str] | None = None
) -> dict[QueueRef, dict[Ask, Span] | BaseException]:
    """:func:`read_of` of whole spans (with only the records named in ``only``, if given)."""
    return await read_of(asks, now_ms, partial(loads_span, only=only), merged)


async def read_totals_of(
    asks: Mapping[QueueRef, Sequence[Ask]], now_ms: int
) -> dict[QueueRef, dict[Ask, PackedRecord] | BaseException]:
    """:func:`read_of` of the queue's records alone, packed (packed.py): an hour's or a day's
    from its record stored alone (storage.ALONE), or its span where it has none."""
    alone = {ref: [(ALONE.get(t, t), s) for t, s in wanted] for ref, wanted in asks.items()}
    found = await read_of(alone, now_ms, loads_total, added, _total_parts)
    return {
        ref: each
        if isinstance(each, BaseException)
        else {(_SPAN_OF.get(t, t), s): r for (t, s), r in each.items()}
        for ref, each in found.items()
    }


async def read_spans(
    ref: QueueRef,
    tier: str,
    starts: list[int],
    now_ms: int,
    only: frozenset[str] | None = None,
) -> dict[int, Span]:
    """The spans of ``tier`` starting at ``starts`` (ms), by start (with only the records
    named in ``only``, if given); a span nothing was recorded for is empty."""
    found = (await read_spans_of({ref: [(tier, start) for start in starts]}, now_ms, only))[ref]
    if isinstance(found, BaseException):
        raise found
    return {start: span for (_, start), span in found.items()}


def cover(lo: int, hi: int, now_ms: int) -> dict[str, list[int]]:
    """The fewest spans whose sketches make up ``lo``..``hi`` (ms, minute-aligned): whole days,
    then whole hours, then minutes. A start older than a tier's sketches are kept is moved back
    to the start of its hour (or day): a range's percentiles then count the whole of its first
    hour (or day), its counts never do (they add the summaries of its own steps)."""
    if lo < now_ms - SKETCH_KEPT_MS["m"]:
        lo -= lo % HOUR_MS
    if lo < now_ms - SKETCH_KEPT_MS["h"]:
        lo -= lo % DAY_MS
    pieces: dict[str, list[int]] = {"d": [], "h": [], "m": []}
    at = lo
    while at < hi:
        for tier, size in (("d", DAY_MS), ("h", HOUR_MS), ("m", MINUTE_MS)):
            if size == MINUTE_MS or (at % size == 0 and at + size <= hi):
                pieces[tier].append(at)
                at += size
                break
    return pieces


async def read_covers(
    refs: Sequence[QueueRef], lo: int, hi: int, now_ms: int, only: frozenset[str] | None = None
) -> dict[QueueRef, Span | BaseException]:
    """Each queue's records of ``lo``..``hi`` merged (the sketches of :func:`cover`), every
    queue in one round trip per connection; a queue whose read failed gets the error."""
    asks = [(tier, start) for tier, starts in cover(lo, hi, now_ms).items() for start in starts]
    found = await read_spans_of({ref: asks for ref in refs}, now_ms, only)
    return {
        ref: spans if isinstance(spans, BaseException) else merged(list(spans.values()))
        for ref, spans in found.items()
    }


async def read_cover(
    ref: QueueRef, lo: int, hi: int, now_ms: int, only: frozenset[str] | None = None
) -> Span:
    """Every record of ``lo``..``hi`` merged (the sketches of :func:`cover`)."""
    found = (await read_covers([ref], lo, hi, now_ms, only))[ref]
    if isinstance(found, BaseException):
        raise found
    return found


async def read_cover_totals(
    refs: Sequence[QueueRef], lo: int, hi: int, now_ms: int
) -> dict[QueueRef, NameRecord | BaseException]:
    """Each queue's record of ``lo``..``hi`` (the sketches of :func:`cover`), its job names
    and slowest runs left out, every queue in one round trip per connection; a queue whose
    read failed gets the error."""
    asks = [(tier, start) for tier, starts in cover(lo, hi, now_ms).items() for start in starts]
    found = await read_totals_of({ref: asks for ref in refs}, now_ms)
    return {
        ref: spans if isinstance(spans, BaseException) else unpacked(added(list(spans.values())))
        for ref, spans in found.items()
    }


async def read_cover_names(ref: QueueRef, lo: int, hi: int, now_ms: int) -> dict[str, NameRecord]:
    """Each job name's record of ``lo``..``hi`` (the sketches of :func:`cover`), without
    slowest runs, added up packed (packed.py)."""
    asks = [(tier, start) for tier, starts in cover(lo, hi, now_ms).items() for start in starts]
    found = (await read_of({ref: asks}, now_ms, loads_names, added_names))[ref]
    if isinstance(found, BaseException):
        raise found
    return {name: unpacked(record) for name, record in added_names(list(found.values())).items()}
