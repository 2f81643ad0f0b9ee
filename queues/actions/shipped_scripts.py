"""BullMQ scripts the bullmq package ships in its ``commands/`` folder but has no method for.

The Python package (3.4.4) has no ``Job.changeDelay`` or ``Job.removeUnprocessedChildren``,
yet it ships the very Lua scripts Node BullMQ runs for them. Running those scripts, with the
keys and arguments Node passes, changes a job exactly as Node would: never a hand-written edit.
"""

from __future__ import annotations

from functools import cache

import redis.asyncio as aioredis
from bullmq.redis_connection import loadScript
from redis.commands.core import AsyncScript


@cache
def _source(file_name: str) -> str:
    text: str = loadScript(file_name)
    return text


def shipped_script(client: aioredis.Redis, file_name: str) -> AsyncScript:
    """The package's script ``file_name`` (``changeDelay-4.lua``) bound to ``client``: it runs
    by EVALSHA, and loads itself when Redis does not know it yet (nothing was run then)."""
    return client.register_script(_source(file_name))
