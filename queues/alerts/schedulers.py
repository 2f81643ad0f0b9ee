"""The scheduler_overdue_seconds rule: each queue's job scheduler due first (the lowest score
of its repeat set: when it runs next), late by more than the threshold and not taken.

Most queues have no scheduler, and their repeat set does not exist: on one Redis (not a
Cluster, where queues share no slot) one ``EXISTS`` over many queues' repeat sets says that of
all of them at once, and only the queues of a batch that holds one are read one by one. Two
round trips per connection, at a cost in commands of the queues that have schedulers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from redis.exceptions import RedisError

from queues.alerts.thresholds import Alert
from queues.errors import BullpenError, RedisUnavailable
from queues.reads.keys import QueueRef
from queues.redis import per_connection
from queues.redis.clients import get_client
from queues.redis.cluster import is_cluster
from queues.redis.errors import translate_redis_errors

_TROUBLE = (BullpenError, RedisError, OSError)
# Repeat sets asked about in one EXISTS: small enough that Redis answers it at once.
EXISTS_KEYS = 500


async def _with_schedulers(refs: Sequence[QueueRef]) -> list[QueueRef]:
    """``refs`` less those whose batch's EXISTS says none of its repeat sets exists (an
    unanswered batch keeps its queues: their own reads then say what is wrong)."""
    batches: list[list[QueueRef]] = []
    kept: list[QueueRef] = []
    for connection, share in per_connection.by_connection(refs).items():
        if is_cluster(get_client(connection)):
            kept += share
            continue
        batches += [share[at : at + EXISTS_KEYS] for at in range(0, len(share), EXISTS_KEYS)]
    if not batches:
        return kept
    replies = await per_connection.execute(
        [batch[0].connection for batch in batches],
        [("EXISTS", *(ref.key("repeat") for ref in batch)) for batch in batches],
    )
    for batch, reply in zip(batches, replies, strict=True):
        if not isinstance(reply, int) or reply:
            kept += batch
    return kept


async def read_schedulers(
    refs: Sequence[QueueRef], now_ms: int
) -> dict[QueueRef, list[Any] | BaseException]:
    """Each queue's first scheduler due (``[member, score]``, empty when it has none) or the
    error its read met."""
    if not refs:
        return {}
    try:
        async with translate_redis_errors():
            asked = await _with_schedulers(refs)
            commands = [("ZRANGE", ref.key("repeat"), 0, 0, "WITHSCORES") for ref in asked]
            replies = await per_connection.execute_for(asked, commands)
    except _TROUBLE:
        return dict.fromkeys(refs, RedisUnavailable("Redis is unreachable"))
    found: dict[QueueRef, list[Any] | BaseException] = {ref: [] for ref in refs}
    found.update(zip(asked, replies, strict=True))
    return found


def overdue(
    refs: Sequence[QueueRef],
    limits: Mapping[QueueRef, Mapping[str, float | None]],
    firsts: Mapping[QueueRef, list[Any] | BaseException],
    now_ms: int,
) -> tuple[dict[QueueRef, Alert], list[QueueRef]]:
    """The queues whose rule fires (and its alert), and those it cannot decide."""
    firing: dict[QueueRef, Alert] = {}
    undecided: list[QueueRef] = []
    for ref in refs:
        reply = firsts[ref]
        if isinstance(reply, BaseException):
            undecided.append(ref)
            continue
        limit = limits[ref]["scheduler_overdue_seconds"]
        if not reply or limit is None:
            continue
        # [member, score], or [[member, score]] where Redis speaks RESP3.
        first = reply[0] if isinstance(reply[0], list) else reply
        late = now_ms - int(float(first[1]))
        if late >= 0 and late / 1000 > limit:
            firing[ref] = Alert("scheduler_overdue_seconds", late // 1000, limit)
    return firing, undecided
