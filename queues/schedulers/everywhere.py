"""Every queue's job schedulers, for the schedulers page: two round trips per connection
whatever the number of queues.

First one pipelined batch of EXISTS over every queue's ``repeat`` sorted set (most queues have
none), then one call of lua/read_schedulers.lua per queue that has one, in one batch: it reads
the schedulers, their hashes, the state of each one's next job and the last jobs each made.
Connections are read at the same time; one that cannot be read is named, the others shown.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from queues.reads.keys import QueueRef
from queues.reads.scripts import is_noscript, script
from queues.redis import fastpipe, per_connection, reachability
from queues.redis.clients import get_client
from queues.redis.errors import reason
from queues.redis.fastpipe import Command
from queues.redis.unreachable import UNREACHABLE
from queues.schedulers.rows import scheduler_row

MAX_PER_QUEUE = 1000  # schedulers read of one queue, the next to run first
RECENT_WINDOW = 200  # newest completed, failed and active jobs looked through per queue
LAST_JOBS = 5  # last jobs shown per scheduler


@dataclass
class Schedulers:
    rows: list[dict[str, Any]] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # connection: why


def _read_command(sha: str, ref: QueueRef) -> Command:
    keys = [ref.key(name) for name in ("repeat", "delayed", "prioritized", "completed")]
    keys += [ref.key("failed"), ref.key("active")]
    return ("EVALSHA", sha, len(keys), *keys, ref.key(""), MAX_PER_QUEUE, RECENT_WINDOW, LAST_JOBS)


async def _read_connection(name: str, refs: list[QueueRef]) -> list[Any]:
    redis = get_client(name)
    reader = script(redis, "read_schedulers")
    commands = [_read_command(reader.sha, ref) for ref in refs]
    replies = await fastpipe.execute(redis, commands)
    if any(is_noscript(reply) for reply in replies):
        # Only after a Redis restart or SCRIPT FLUSH: one more round trip, once.
        await redis.script_load(reader.script)
        replies = await fastpipe.execute(redis, commands)
    return replies


async def _share(name: str, refs: list[QueueRef]) -> list[Any] | BaseException:
    try:
        return await _read_connection(name, refs)
    except UNREACHABLE as error:
        reachability.note_down(name, reason(error))
        return error


async def all_schedulers(refs: Sequence[QueueRef]) -> Schedulers:
    """The job schedulers of ``refs``, in no particular order (rows.ordered sorts them)."""
    found = Schedulers()
    exists = await per_connection.execute_for(refs, [("EXISTS", ref.key("repeat")) for ref in refs])
    with_any: dict[str, list[QueueRef]] = {}
    for ref, reply in zip(refs, exists, strict=True):
        if isinstance(reply, BaseException):
            found.unreadable.setdefault(ref.connection, reason(reply))
        elif reply:
            with_any.setdefault(ref.connection, []).append(ref)
    shares = list(with_any.items())
    answers = await asyncio.gather(*(_share(name, members) for name, members in shares))
    now_ms = int(time.time() * 1000)
    for (name, members), answer in zip(shares, answers, strict=True):
        if isinstance(answer, BaseException):
            found.unreadable[name] = reason(answer)
            continue
        for ref, rows in zip(members, answer, strict=True):
            if isinstance(rows, BaseException):
                found.unreadable.setdefault(name, reason(rows))
                continue
            found.rows.extend(scheduler_row(ref, raw, now_ms) for raw in rows)
    return found
