"""Where bulk actions live in Redis, under Bullpen's own key prefix (never a queue's keys).

Each action lives on its queue's own connection (queues/redis/connections.py), beside the jobs it
moves: a batch and its count are one transaction there, and an action on one server needs no
other server to be up. With several connections an action's id ends in ``@<connection>``, so
that its status and cancel URLs find it.

``<p>:action:<id>`` is the record (a hash), ``<p>:action:<id>:ids`` the job ids of a list
action, ``<p>:actions:pending`` every action not yet settled (the runner's work list),
``<p>:actions:recent`` the newest ones for the API, ``<p>:actions:lease`` the runner's lease.
Changes that must not race a runner or a cancel are small scripts on the record alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.exceptions import OutOfMemoryError, WatchError

from queues.bulk.record import ActionRecord, now_ms
from queues.errors import ActionNotFound, RedisUnavailable
from queues.redis import connections
from queues.redis.clients import get_client
from queues.redis.connections import own_key_prefix

_MAX_TRIES = 20  # looks at the work list before giving up when it keeps changing

# At maxmemory Redis refuses a command that needs memory only while the script running it has
# written nothing yet (it cannot stop a script halfway). Each script that writes an action's
# record therefore begins with a write that needs none: PERSIST on the record, which has no
# expiry until it is settled, so changes nothing. An action that removes jobs, and so frees
# memory, is then never stopped by its own few bytes of bookkeeping.
WRITE_FIRST = "redis.call('PERSIST', KEYS[1])\n"

_FINISHED_LUA = (
    "local function finished(s) return s == 'done' or s == 'cancelled' or "
    "s == 'interrupted' or s == 'failed' end\n"
)

# Take an action over: this runner's token becomes its owner, which also aborts any batch its
# previous runner still has in flight (those transactions WATCH the record).
_CLAIM = (
    WRITE_FIRST
    + _FINISHED_LUA
    + """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
if finished(state) then return -1 end
local previous = redis.call('HGET', KEYS[1], 'owner')
if previous and previous ~= '' and previous ~= ARGV[1] then
  redis.call('HINCRBY', KEYS[1], 'resumes', 1)
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'state', 'running')
if (tonumber(redis.call('HGET', KEYS[1], 'started')) or 0) == 0 then
  redis.call('HSET', KEYS[1], 'started', ARGV[2])
end
return 1
"""
)

_REQUEST_CANCEL = (
    WRITE_FIRST
    + _FINISHED_LUA
    + """
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
if finished(state) then return -1 end
local given = redis.call('HGET', KEYS[1], 'cancel')
if not given or given == '' then redis.call('HSET', KEYS[1], 'cancel', ARGV[1]) end
return 1
"""
)

# The end, written only by the runner that owns the action.
_FINISH = (
    WRITE_FIRST
    + _FINISHED_LUA
    + """
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
if finished(redis.call('HGET', KEYS[1], 'state')) then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'error', ARGV[3], 'finished', ARGV[4],
           'updated', ARGV[4], 'detail', ARGV[5])
return 1
"""
)

# One job of a list acted on: count it and move the cursor past it together.
# Answers {owned, who asked to cancel}.
_COMMIT_JOB = (
    WRITE_FIRST
    + """
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return {0, ''} end
if ARGV[2] == '1' then
  redis.call('HINCRBY', KEYS[1], 'count', 1)
else
  redis.call('HINCRBY', KEYS[1], 'refused', 1)
end
redis.call('HSET', KEYS[1], 'next', ARGV[3], 'updated', ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'detail', ARGV[5]) end
return {1, redis.call('HGET', KEYS[1], 'cancel') or ''}
"""
)

_SAVE_DETAIL = WRITE_FIRST + "redis.call('HSET', KEYS[1], 'detail', ARGV[1])\n"

# A new action, written even at maxmemory (for actions that free memory). KEYS: the record,
# the work list, the recent list; ARGV: id, created (ms), how many recent to keep, then the
# record's fields and values.
_CREATE = (
    WRITE_FIRST
    + """
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[3]) + 1))
return 1
"""
)

# KEYS: a list action's job ids; ARGV: the next of them.
_PUSH_IDS = "redis.call('PERSIST', KEYS[1])\nreturn redis.call('RPUSH', KEYS[1], unpack(ARGV))\n"

# Off the work list first (a write that needs no memory), then marked settled to expire.
# KEYS: the record, the work list, the job ids; ARGV: id, seconds to keep it.
_SETTLE = """
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'settled', '1')
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[3])
return 1
"""


class ActionStore:
    def __init__(
        self, redis: aioredis.Redis, key_prefix: str | None = None, connection: str = ""
    ) -> None:
        self.redis = redis
        self.connection = connection or connections.default_name()
        prefix = key_prefix or own_key_prefix(self.connection)
        self.prefix = prefix
        self.pending_key = f"{prefix}:actions:pending"
        self.recent_key = f"{prefix}:actions:recent"
        self.lease_key = f"{prefix}:actions:lease"
        self._claim = redis.register_script(_CLAIM)
        self._request_cancel = redis.register_script(_REQUEST_CANCEL)
        self._finish = redis.register_script(_FINISH)
        self._commit_job = redis.register_script(_COMMIT_JOB)
        self._save_detail = redis.register_script(_SAVE_DETAIL)
        self._create = redis.register_script(_CREATE)
        self._push_ids = redis.register_script(_PUSH_IDS)
        self._settle = redis.register_script(_SETTLE)

    def key(self, action_id: str) -> str:
        return f"{self.prefix}:action:{action_id}"

    def ids_key(self, action_id: str) -> str:
        return f"{self.prefix}:action:{action_id}:ids"

    async def create(
        self,
        record: ActionRecord,
        job_ids: list[str] | None,
        keep_recent: int,
        same_work: Callable[[ActionRecord], bool] | None = None,
        *,
        even_when_full: bool = False,
    ) -> ActionRecord | None:
        """The record, its job ids and its place in the work list, all or nothing. With
        ``same_work``: unless an unfinished action of the work list is one it says does the
        same work; that one is answered then, and nothing is written. ``even_when_full``:
        written at maxmemory too (an action that frees memory); otherwise Redis refuses it
        then (OutOfMemoryError)."""
        for _ in range(_MAX_TRIES):
            async with self.redis.pipeline(transaction=True) as pipe:
                try:
                    if same_work is not None:
                        # Two asked at once both write the work list: one of them looks again.
                        await pipe.watch(self.pending_key)
                        first = await self._same_running(pipe, same_work)
                        if first is not None:
                            return first
                        pipe.multi()  # type: ignore[no-untyped-call]
                    self._queue_create(pipe, record, job_ids, keep_recent)
                    await pipe.execute()
                    return None
                except WatchError:
                    continue
                except OutOfMemoryError:
                    if not even_when_full:
                        raise
                    break
        else:
            raise RedisUnavailable("Bulk actions' work list kept changing; try again")
        return await self._create_when_full(record, job_ids, keep_recent, same_work)

    async def _same_running(
        self, redis: aioredis.Redis, same_work: Callable[[ActionRecord], bool]
    ) -> ActionRecord | None:
        ids = [str(i) for i in await redis.zrange(self.pending_key, 0, -1)]
        found: list[Any] = [await redis.hgetall(self.key(i)) for i in ids]  # decoded: str to str
        running = [r for r in map(ActionRecord.from_fields, found) if r.id and not r.finished]
        return next((r for r in running if same_work(r)), None)

    async def _create_when_full(
        self,
        record: ActionRecord,
        job_ids: list[str] | None,
        keep_recent: int,
        same_work: Callable[[ActionRecord], bool] | None,
    ) -> ActionRecord | None:
        """At maxmemory Redis refuses every transaction (MULTI queues memory): the scripts
        alone then, job ids first and the record last, so the runner never sees a record
        without its jobs. The check for the same work just before is not atomic with it."""
        if same_work is not None:
            first = await self._same_running(self.redis, same_work)
            if first is not None:
                return first
        ids = list(job_ids or [])
        for start in range(0, len(ids), 1000):
            chunk = ids[start : start + 1000]
            await self._push_ids(keys=[self.ids_key(record.id)], args=chunk)
        fields = [part for pair in record.to_fields().items() for part in pair]
        keys = [self.key(record.id), self.pending_key, self.recent_key]
        await self._create(keys=keys, args=[record.id, record.created_ms, keep_recent, *fields])
        return None

    def _queue_create(
        self, pipe: Pipeline, record: ActionRecord, job_ids: list[str] | None, keep_recent: int
    ) -> None:
        pipe.hset(self.key(record.id), mapping=record.to_fields())  # type: ignore[arg-type]
        ids = list(job_ids or [])
        for start in range(0, len(ids), 1000):
            pipe.rpush(self.ids_key(record.id), *ids[start : start + 1000])
        pipe.zadd(self.pending_key, {record.id: record.created_ms})
        pipe.zadd(self.recent_key, {record.id: record.created_ms})
        pipe.zremrangebyrank(self.recent_key, 0, -(keep_recent + 1))

    async def load(self, action_id: str) -> ActionRecord | None:
        fields: Any = await self.redis.hgetall(self.key(action_id))  # decoded: str to str
        return ActionRecord.from_fields(fields) if fields.get("id") else None

    async def load_many(self, action_ids: list[str]) -> list[ActionRecord]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for action_id in action_ids:
                pipe.hgetall(self.key(action_id))
            replies: list[dict[str, str]] = await pipe.execute()
        return [ActionRecord.from_fields(r) for r in replies if r.get("id")]

    async def pending_ids(self, limit: int = 100) -> list[str]:
        """Oldest first: actions run in the order they were asked for."""
        return [str(i) for i in await self.redis.zrange(self.pending_key, 0, limit - 1)]

    async def recent(self, limit: int) -> list[ActionRecord]:
        ids = [str(i) for i in await self.redis.zrevrange(self.recent_key, 0, limit - 1)]
        return await self.load_many(ids)

    async def job_ids(self, action_id: str, start: int, stop: int) -> list[str]:
        return [str(i) for i in await self.redis.lrange(self.ids_key(action_id), start, stop)]

    async def claim(self, action_id: str, owner: str) -> int:
        """1: ours now; -1: already finished; 0: no such action."""
        return int(await self._claim(keys=[self.key(action_id)], args=[owner, now_ms()]))

    async def request_cancel(self, action_id: str, username: str) -> int:
        """1: the runner stops it at its next batch; -1: already finished; 0: unknown."""
        return int(await self._request_cancel(keys=[self.key(action_id)], args=[username]))

    async def finish(
        self, action_id: str, owner: str, state: str, error: str, detail: dict[str, Any]
    ) -> bool:
        done = await self._finish(
            keys=[self.key(action_id)],
            args=[owner, state, error[:2000], now_ms(), json.dumps(detail)],
        )
        return bool(done)

    async def commit_job(
        self, action_id: str, owner: str, moved: bool, next_index: int, detail: str
    ) -> tuple[bool, str]:
        """Count one job of a list and move past it: (still ours, who asked to cancel)."""
        owned, cancel = await self._commit_job(
            keys=[self.key(action_id)],
            args=[owner, "1" if moved else "0", next_index, now_ms(), detail],
        )
        return bool(owned), str(cancel or "")

    async def save_detail(self, action_id: str, detail: dict[str, Any]) -> None:
        await self._save_detail(keys=[self.key(action_id)], args=[json.dumps(detail)])

    async def settle(self, action_id: str, keep_s: int) -> None:
        """Finished and audited: off the work list; the record expires in ``keep_s``."""
        keys = [self.key(action_id), self.pending_key, self.ids_key(action_id)]
        await self._settle(keys=keys, args=[action_id, keep_s])

    async def forget(self, action_id: str) -> None:
        """A work-list entry whose record is gone (expired, or deleted by hand)."""
        await self.redis.zrem(self.pending_key, action_id)


def store_for(connection: str | None = None) -> ActionStore:
    """The store on ``connection`` (None: the default one), on this event loop's shared client."""
    name = connection or connections.default_name()
    return ActionStore(get_client(name), own_key_prefix(name), name)


def id_suffix(connection: str) -> str:
    """What a new action's id ends with: its connection, when there are several."""
    return f"{connections.SLUG_SEPARATOR}{connection}" if connections.several() else ""


def store_of(action_id: str) -> ActionStore:
    """The store that holds action ``action_id``: the connection its id names, or (an id
    without one, made while there was one connection) the default one."""
    _, sep, name = action_id.rpartition(connections.SLUG_SEPARATOR)
    if not connections.state_on_redis():
        raise ActionNotFound(f"No action {action_id!r}")  # none is recorded without a Redis
    if not sep:
        return store_for()
    if name not in connections.redis_names():
        raise ActionNotFound(f"No action {action_id!r}")
    return store_for(name)
