"""Jobs finished in a recent window, counted from the finished sets' scores (finishedOn).

A window of whole minutes ending with the current one, as the throughput series count it
(queues/throughput/rates.py): the figures of one page agree.
"""

from __future__ import annotations

import time

from queues.reads.keys import QueueRef
from queues.redis import per_connection
from queues.redis.errors import translate_redis_errors
from queues.throughput.rates import window_start


async def finished_since(refs: list[QueueRef], seconds: int) -> dict[QueueRef, dict[str, int]]:
    """Completed and failed jobs per queue over the last ``seconds`` (in whole minutes: the
    current one and those before it), in one round trip. Counts only what the queue keeps:
    removeOnComplete / removeOnFail trim these sets."""
    if not refs:
        return {}
    since = since_of(seconds)
    commands = []
    for ref in refs:
        commands.append(("ZCOUNT", ref.key("completed"), since, "+inf"))
        commands.append(("ZCOUNT", ref.key("failed"), since, "+inf"))
    async with translate_redis_errors():
        replies = await per_connection.execute_for([r for r in refs for _ in (0, 1)], commands)
    result = {}
    for index, ref in enumerate(refs):
        completed, failed = replies[2 * index], replies[2 * index + 1]
        result[ref] = {
            "completed": completed if isinstance(completed, int) else 0,
            "failed": failed if isinstance(failed, int) else 0,
        }
    return result


async def failed_since(
    refs: list[QueueRef], seconds: int, *, since: int | None = None
) -> dict[QueueRef, dict[str, int]]:
    """Failed jobs per queue over the last ``seconds``, as :func:`finished_since` counts them
    (``{"failed": n}``), without the completed ones: what alerts need, at one read a queue.
    ``since``: the window's start (ms) as :func:`since_of` gave it, when the caller has it."""
    if not refs:
        return {}
    if since is None:
        since = since_of(seconds)
    commands = [("ZCOUNT", ref.key("failed"), since, "+inf") for ref in refs]
    async with translate_redis_errors():
        replies = await per_connection.execute_for(refs, commands)
    return {
        ref: {"failed": reply if isinstance(reply, int) else 0}
        for ref, reply in zip(refs, replies, strict=True)
    }


def since_of(seconds: int) -> int:
    """Where a window of the last ``seconds`` starts (ms): the first of its whole minutes."""
    return window_start(int(time.time() * 1000), max(1, seconds // 60))
