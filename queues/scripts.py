"""Bullpen's own read-only Lua scripts (state changes use the bullmq package's scripts)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions as redis_exceptions
from redis.commands.core import AsyncScript

from queues import fastpipe

_LUA = Path(__file__).with_name("lua")


@cache
def _source(name: str) -> str:
    return (_LUA / f"{name}.lua").read_text()


def script(redis: aioredis.Redis, name: str) -> AsyncScript:
    """A script bound to ``redis``; it runs by EVALSHA and loads itself on NOSCRIPT."""
    return redis.register_script(_source(name))


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
    reader = script(redis, "read_jobs")
    command = ("EVALSHA", reader.sha, len(keys), *keys, cap, *fields)
    replies, *more = await fastpipe.execute(redis, [command, *also])
    if isinstance(replies, redis_exceptions.ResponseError) and "NOSCRIPT" in str(replies):
        await redis.script_load(reader.script)
        replies, *more = await fastpipe.execute(redis, [command, *also])
    if isinstance(replies, Exception):
        raise replies
    rows: list[tuple[list[str | None], list[Any]]] = replies
    return rows, more
