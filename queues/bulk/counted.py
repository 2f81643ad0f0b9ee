"""Batches counted exactly, in the transaction that makes them.

BullMQ's ``moveJobsToWait`` answers only "more left or not", and its ``cleanJobsInSet`` says
how many it removed in the ``cleaned`` event it writes last. Each batch is therefore one
MULTI/EXEC holding BullMQ's own script and a small script of ours that reads what that batch
moves (the same range, just before) or removed (its event, just after) and adds it to the
action's record. Nothing runs between them, so the count is what this action moved and no
other; and the whole transaction happens or not, so a crash never separates a batch from its
count. The transaction WATCHes the record: a cancel or a takeover by another runner aborts
the batch before it runs.

On a Redis Cluster one transaction may only touch one slot, and the record lives in Bullpen's
slot, the batch in the queue's. There the batch and its count run as one transaction in the
queue's slot, the record is checked just before and credited just after: a cancel lands at the
next batch, and a crash between a batch and its credit shows the count short by that batch
(the jobs themselves are moved once either way).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.exceptions import OutOfMemoryError, WatchError

from queues.bulk.record import now_ms
from queues.errors import RedisUnavailable
from queues.redis.cluster import is_cluster

# KEYS: the action's record (left out on a cluster), then the set moveJobsToWait reads from.
# ARGV[1] its max score, ARGV[2] its batch size, ARGV[3] now (ms).
# The same ZRANGEBYSCORE 0..max LIMIT 0 n the script runs next: it moves exactly this many.
COUNT_BEFORE_MOVE = """
local n = redis.call('ZCOUNT', KEYS[#KEYS], '0', ARGV[1])
local limit = tonumber(ARGV[2])
if n > limit then n = limit end
if #KEYS == 2 then
  redis.call('PERSIST', KEYS[1])  -- a write first: allowed at maxmemory (store.WRITE_FIRST)
  redis.call('HINCRBY', KEYS[1], 'count', n)
  redis.call('HSET', KEYS[1], 'updated', ARGV[3])
end
return n
"""

# KEYS: the action's record (left out on a cluster), then the queue's event stream.
# ARGV[1] now (ms), ARGV[2] the stream's newest entry id just before the batch ('' if none).
# cleanJobsInSet ends by writing {event: cleaned, count: n}: the newest entry, read right after;
# if the clean was refused (an error inside the transaction), the newest is still the one of
# before, and nothing is counted.
COUNT_CLEANED = """
local newest = redis.call('XREVRANGE', KEYS[#KEYS], '+', '-', 'COUNT', 1)[1]
local n = 0
if newest and newest[1] ~= ARGV[2] then
  local fields = newest[2]
  local event, count
  for i = 1, #fields, 2 do
    if fields[i] == 'event' then event = fields[i + 1] end
    if fields[i] == 'count' then count = fields[i + 1] end
  end
  if event == 'cleaned' then n = tonumber(count) or 0 end
end
if #KEYS == 2 then
  redis.call('PERSIST', KEYS[1])  -- a write first: allowed at maxmemory (store.WRITE_FIRST)
  redis.call('HINCRBY', KEYS[1], 'count', n)
  redis.call('HSET', KEYS[1], 'updated', ARGV[1])
end
return n
"""


class LostAction(Exception):
    """Another runner owns the action now (this one lost its lease): stop, it continues."""


class CancelRequested(Exception):
    """Someone asked to cancel the action."""


Build = Callable[[Pipeline], Awaitable[None]]
_MAX_TRIES = 50


async def counted_batch(
    redis: aioredis.Redis, record_key: str, owner: str, build: Build, count_at: int
) -> Any:
    """Run the commands ``build`` queues as one transaction, unless the action was cancelled
    or taken over first; the replies, in order (``count_at``: the one that is the count)."""
    if is_cluster(redis):
        return await _counted_on_cluster(redis, record_key, owner, build, count_at)
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
            except OutOfMemoryError:
                pass  # refused before anything ran: see _counted_when_full
            except WatchError as error:
                if error.__context__ is not None:
                    # redis-py says WatchError when the connection broke while watching: the
                    # batch may have run (with its count) or not; the runner reloads and goes on.
                    raise RedisUnavailable(f"Redis connection lost: {error.__context__}") from error
                # The record changed meanwhile (a cancel, a takeover): look again.
                continue
        return await _counted_when_full(redis, record_key, owner, build)
    raise RedisUnavailable("The action's record kept changing; trying again later")


async def _counted_when_full(
    redis: aioredis.Redis, record_key: str, owner: str, build: Build
) -> Any:
    """At maxmemory Redis refuses every transaction (MULTI queues memory), and only actions
    that remove jobs run then (submit.py). Their batch and its count go back to back without
    one: the count scripts write first a change that needs no memory, so Redis lets them
    credit the record. A crash between the two, or a worker's event written between them
    (clean counts the event it reads), leaves that batch's count short, never long."""
    current, cancel = await redis.hmget(record_key, ["owner", "cancel"])
    if current != owner:
        raise LostAction
    if cancel:
        raise CancelRequested
    async with redis.pipeline(transaction=False) as pipe:
        await build(pipe)
        return await pipe.execute()


async def _counted_on_cluster(
    redis: aioredis.Redis, record_key: str, owner: str, build: Build, count_at: int
) -> Any:
    current, cancel = await redis.hmget(record_key, ["owner", "cancel"])
    if current != owner:
        raise LostAction
    if cancel:
        raise CancelRequested
    async with redis.pipeline(transaction=True) as pipe:
        await build(pipe)
        replies = await pipe.execute()
    await redis.hincrby(record_key, "count", int(replies[count_at]))
    await redis.hset(record_key, "updated", now_ms())
    return replies


def count_keys(redis: aioredis.Redis, record_key: str, key: str) -> list[str]:
    """The count scripts' keys: with the record, or on a cluster without (credited after)."""
    return [key] if is_cluster(redis) else [record_key, key]
