"""Bullpen's own read-only Lua scripts (state changes use the bullmq package's scripts)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

_LUA = Path(__file__).with_name("lua")


@cache
def _source(name: str) -> str:
    return (_LUA / f"{name}.lua").read_text()


def script(redis: aioredis.Redis, name: str) -> AsyncScript:
    """A script bound to ``redis``; it runs by EVALSHA and loads itself on NOSCRIPT."""
    return redis.register_script(_source(name))
