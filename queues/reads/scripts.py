"""Bullpen's own read-only Lua scripts (state changes use the bullmq package's scripts)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import redis.asyncio as aioredis
import redis.exceptions as redis_exceptions
from redis.commands.core import AsyncScript
from redis.crc import key_slot

from queues.redis import fastpipe
from queues.redis.cluster import is_cluster

_LUA = Path(__file__).with_name("lua")
_Item = TypeVar("_Item")


@cache
def _source(name: str) -> str:
    return (_LUA / f"{name}.lua").read_text()


def script(redis: aioredis.Redis, name: str) -> AsyncScript:
    """A script bound to ``redis``; it runs by EVALSHA and loads itself on NOSCRIPT."""
    bound = redis.register_script(_source(name))
    fastpipe.remember_script(bound.sha, _source(name))
    return bound


async def in_pipeline(
    redis: aioredis.Redis, pipe: Any, name: str, keys: list[str], args: list[Any]
) -> None:
    """Queue Bullpen's script ``name`` in ``pipe``."""
    await queue_script(redis, pipe, script(redis, name), keys, args)


async def read_capped_fields(
    redis: aioredis.Redis,
    keys: list[str],
    cap: int,
    fields: tuple[str, ...],
    also: Sequence[fastpipe.Command] = (),
) -> tuple[list[tuple[list[str | None], list[Any]]], list[Any]]:
    """``fields`` of each job hash in ``keys``, values over ``cap`` bytes cut inside Redis
    (lua/read_jobs.lua), in one round trip parsed in one pass. Per key: (values, cut list).
    The replies to the commands in ``also`` come second, from the same round trip."""
    return await per_key(redis, "read_jobs", keys, [cap, *fields], also)


async def per_key(
    redis: aioredis.Redis,
    name: str,
    keys: list[str],
    args: Sequence[Any],
    also: Sequence[fastpipe.Command] = (),
    per_call: int | None = None,
) -> tuple[list[Any], list[Any]]:
    """Run Bullpen's script ``name``, which answers one row per key, over ``keys`` in one round
    trip: (the rows in the order of ``keys``, the replies to the commands in ``also``).
    ``per_call``: the most keys one call of the script reads (so that no call holds Redis
    long); the calls go one after another in the same round trip. By default one call."""
    reader = script(redis, name)
    if is_cluster(redis):
        return await _per_key_by_slot(redis, reader.sha, keys, args, also, per_call)
    commands: list[fastpipe.Command] = [
        ("EVALSHA", reader.sha, len(part), *part, *args) for part in _calls(keys, per_call)
    ]
    replies = await fastpipe.execute(redis, [*commands, *also])
    if any(is_noscript(reply) for reply in replies[: len(commands)]):
        await redis.script_load(reader.script)
        replies = await fastpipe.execute(redis, [*commands, *also])
    rows: list[Any] = []
    for reply in replies[: len(commands)]:
        if isinstance(reply, Exception):
            raise reply
        rows.extend(reply)
    return rows, replies[len(commands) :]


def _calls(items: list[_Item], per_call: int | None) -> list[list[_Item]]:
    if per_call is None or len(items) <= per_call:
        return [items]
    return [items[start : start + per_call] for start in range(0, len(items), per_call)]


def is_noscript(reply: Any) -> bool:
    """Whether Redis did not know the script (and ran nothing). redis-py's own pipelines (used
    on a cluster) answer it as ``NoScriptError`` without the error's code in the text."""
    return isinstance(reply, redis_exceptions.NoScriptError) or (
        isinstance(reply, redis_exceptions.ResponseError) and "NOSCRIPT" in str(reply)
    )


async def queue_script(
    redis: aioredis.Redis, pipe: Any, bound: AsyncScript, keys: list[str], args: list[Any]
) -> None:
    """Queue a registered script (Bullpen's or the bullmq package's) in ``pipe``. redis-py's
    cluster pipelines refuse EVALSHA: there the script's text goes (EVAL; Redis keeps it
    compiled by its digest)."""
    if is_cluster(redis):
        pipe.eval(bound.script, len(keys), *keys, *args)
    else:
        await bound(keys=keys, args=args, client=pipe)


async def _per_key_by_slot(
    redis: aioredis.Redis,
    sha: str,
    keys: list[str],
    args: Sequence[Any],
    also: Sequence[fastpipe.Command],
    per_call: int | None,
) -> tuple[list[Any], list[Any]]:
    """:func:`per_key` on a cluster, where a script may only name keys of one slot: one call
    per slot (or per ``per_call`` keys of it), in one pipeline, the rows put back in the order
    of ``keys``."""
    by_slot: dict[int, list[int]] = {}
    for index, key in enumerate(keys):
        by_slot.setdefault(key_slot(key.encode()), []).append(index)
    calls = [part for indexes in by_slot.values() for part in _calls(indexes, per_call)]
    commands: list[fastpipe.Command] = [
        ("EVALSHA", sha, len(indexes), *(keys[i] for i in indexes), *args) for indexes in calls
    ]
    replies = await fastpipe.execute(redis, [*commands, *also])
    rows: list[Any] = [None] * len(keys)
    for indexes, reply in zip(calls, replies, strict=False):
        if isinstance(reply, Exception):
            raise reply
        for index, row in zip(indexes, reply, strict=True):
            rows[index] = row
    return rows, replies[len(commands) :]
