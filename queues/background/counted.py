"""Batches counted exactly, in the transaction that makes them.

BullMQ's ``moveJobsToWait`` answers only "more left or not", and its ``cleanJobsInSet`` says
how many it removed in the ``cleaned`` event it writes last. Each batch is therefore one
MULTI/EXEC holding BullMQ's own script and a small script of ours that reads what that batch
moves (the same range, just before) or removed (its event, just after) and adds it to the
action's record. Nothing runs between them, so the count is what this action moved and no
other; and the whole transaction happens or not, so a crash never separates a batch from its
count. The transaction WATCHes the record: a cancel or a takeover by another runner aborts
the batch before it runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.exceptions import WatchError

from queues.errors import RedisUnavailable

# KEYS[1] the action's record, KEYS[2] the set moveJobsToWait reads from.
# ARGV[1] its max score, ARGV[2] its batch size, ARGV[3] now (ms).
# The same ZRANGEBYSCORE 0..max LIMIT 0 n the script runs next: it moves exactly this many.
COUNT_BEFORE_MOVE = """
local n = redis.call('ZCOUNT', KEYS[2], '0', ARGV[1])
local limit = tonumber(ARGV[2])
if n > limit then n = limit end
redis.call('HINCRBY', KEYS[1], 'count', n)
redis.call('HSET', KEYS[1], 'updated', ARGV[3])
return n
"""

# KEYS[1] the action's record, KEYS[2] the queue's event stream. ARGV[1] now (ms).
# cleanJobsInSet ends by writing {event: cleaned, count: n}: the newest entry, read right after.
COUNT_CLEANED = """
local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
local n = 0
if newest then
  local fields = newest[2]
  local event, count
  for i = 1, #fields, 2 do
    if fields[i] == 'event' then event = fields[i + 1] end
    if fields[i] == 'count' then count = fields[i + 1] end
  end
  if event == 'cleaned' then n = tonumber(count) or 0 end
end
redis.call('HINCRBY', KEYS[1], 'count', n)
redis.call('HSET', KEYS[1], 'updated', ARGV[1])
return n
"""


class LostAction(Exception):
    """Another runner owns the action now (this one lost its lease): stop, it continues."""


class CancelRequested(Exception):
    """Someone asked to cancel the action."""


Build = Callable[[Pipeline], Awaitable[None]]
_MAX_TRIES = 50


async def counted_batch(redis: aioredis.Redis, record_key: str, owner: str, build: Build) -> Any:
    """Run the commands ``build`` queues as one transaction, unless the action was cancelled
    or taken over first; the replies, in order."""
    for _ in range(_MAX_TRIES):
        async with redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(record_key)
                current, cancel = await pipe.hmget(record_key, ["owner", "cancel"])
                if current != owner:
                    raise LostAction
                if cancel:
                    raise CancelRequested
                pipe.multi()  # type: ignore[no-untyped-call]
                await build(pipe)
                return await pipe.execute()
            except WatchError as error:
                if error.__context__ is not None:
                    # redis-py says WatchError when the connection broke while watching: the
                    # batch may have run (with its count) or not; the runner reloads and goes on.
                    raise RedisUnavailable(f"Redis connection lost: {error.__context__}") from error
                # The record changed meanwhile (a cancel, a takeover): look again.
    raise RedisUnavailable("The action's record kept changing; trying again later")
