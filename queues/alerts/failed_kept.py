"""The last hour's failed jobs of each queue, kept between views while the live reader saw no
event of the queue.

The failed_last_hour rule counts a queue's failed set from the window's start (a ``ZCOUNT``,
queues/throughput/recent.py). A set changes only with an event of its queue (a job failed,
retried, removed or cleaned: BullMQ writes one each time), so while the reader took none the
count stands, and stands for a later window start too until the start passes the oldest
failure in the window (read with the count; none: it stands for every later start). A view of
the overview then reads only the queues whose events came since, or whose oldest failure left
the window: at 50,000 queues, thousands of ``ZCOUNT``s a view become a few.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from queues.reads.keys import QueueRef
from queues.redis import per_connection
from queues.redis.errors import translate_redis_errors
from queues.throughput.recent import failed_since, since_of

# A token equal between two calls while no event of the queue came, or None when the caller
# cannot say (dashboard/live/reader_counts.py's ``still``).
Still = Callable[[QueueRef], Hashable | None]

# Queue → (token when read, window start read from, failed jobs found, the oldest one's score:
# the count stands for window starts up to it).
_kept: dict[QueueRef, tuple[Hashable, int, int, float]] = {}
_KEPT = 100_000


async def failed_last(
    refs: Iterable[QueueRef], seconds: int, still: Still | None = None
) -> dict[QueueRef, dict[str, int]]:
    """Failed jobs per queue over the last ``seconds``, as ``failed_since`` counts them,
    reading only the queues ``still`` cannot vouch for."""
    since = since_of(seconds)
    found: dict[QueueRef, dict[str, int]] = {}
    unread: list[QueueRef] = []
    tokens: dict[QueueRef, Hashable] = {}
    for ref in refs:
        token = still(ref) if still is not None else None
        if token is None:
            unread.append(ref)
            continue
        kept = _kept.get(ref)
        if kept is not None and kept[0] == token and kept[1] <= since <= kept[3]:
            found[ref] = {"failed": kept[2]}
        else:
            tokens[ref] = token  # taken before the read: an event during it reads again
    found.update(await failed_since(unread, seconds, since=since))
    if tokens:
        found.update(await _read_and_keep(tokens, since))
    return found


async def _read_and_keep(
    tokens: dict[QueueRef, Hashable], since: int
) -> dict[QueueRef, dict[str, int]]:
    """The count and the oldest failure in the window of each queue, kept with its token."""
    refs = list(tokens)
    commands: list[tuple[Any, ...]] = []
    for ref in refs:
        key = ref.key("failed")
        commands.append(("ZCOUNT", key, since, "+inf"))
        commands.append(("ZRANGEBYSCORE", key, since, "+inf", "WITHSCORES", "LIMIT", 0, 1))
    async with translate_redis_errors():
        replies = await per_connection.execute_for([r for r in refs for _ in (0, 1)], commands)
    if len(_kept) + len(refs) > _KEPT:
        _kept.clear()
    found = {}
    for index, ref in enumerate(refs):
        count, oldest = replies[2 * index], replies[2 * index + 1]
        if not isinstance(count, int) or not isinstance(oldest, list):
            found[ref] = {"failed": count if isinstance(count, int) else 0}
            _kept.pop(ref, None)  # an odd key (of another type): read again next time
            continue
        found[ref] = {"failed": count}
        stands_until = _score(oldest)
        _kept[ref] = (tokens[ref], since, count, stands_until)
    return found


def _score(reply: list[Any]) -> float:
    """The score of a one-member ``WITHSCORES`` reply: flat from a pipeline, a pair from a
    Cluster client's parsed reply; none (an empty window): every later start."""
    if not reply:
        return math.inf
    first = reply[0]
    return float(first[1] if isinstance(first, (list, tuple)) else reply[1])


def forget() -> None:
    _kept.clear()
