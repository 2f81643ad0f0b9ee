"""A pipelined read whose answer came while the process's event loop was busy elsewhere (a
view's long step over 50,000 queues) is read, not taken for Redis's silence; a Redis that does
not answer within ``REDIS_TIMEOUT`` still times out."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import redis
from django.test import override_settings

from queues.redis import fastpipe
from queues.redis.clients import get_client
from tests.support.servers.redis_server import RedisServer

TIMEOUT = 0.3


async def read_while(hold_loop_s: float, pause_ms: int, server: RedisServer) -> list[Any]:
    """Pipelined commands while Redis holds every client ``pause_ms`` and, meanwhile, another
    task holds the loop ``hold_loop_s`` seconds."""
    client = get_client()
    await fastpipe.execute(client, [("PING",)])  # connected before Redis pauses

    async def hold() -> None:
        await asyncio.sleep(0.02)  # the commands are out, their answer awaited
        time.sleep(hold_loop_s)  # noqa: ASYNC251 - the busy loop this is about

    with server.client() as other:
        other.execute_command("CLIENT", "PAUSE", pause_ms, "ALL")
    commands = [("SET", "fastpipe:k", "v"), ("GET", "fastpipe:k"), ("PING",)]
    replies, _ = await asyncio.gather(fastpipe.execute(client, commands), hold())
    return list(replies)


async def test_an_answer_that_came_while_the_loop_was_busy_is_read(
    redis_server: RedisServer, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "REDIS_TIMEOUT": TIMEOUT}):
        # Redis answers after 0.1 s; the loop is back after 0.8 s, past the 0.3 s timeout.
        replies = await read_while(0.8, 100, redis_server)
    assert replies[1:] == ["v", "PONG"] or replies[1:] == [b"v", b"PONG"]


async def test_a_redis_that_does_not_answer_still_times_out(
    redis_server: RedisServer, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "REDIS_TIMEOUT": TIMEOUT}):
        began = time.monotonic()
        with pytest.raises(redis.exceptions.TimeoutError, match="no answer from Redis"):
            await read_while(0.0, 1500, redis_server)
        assert time.monotonic() - began < 1.2  # the timeout, not Redis's pause, ended it
    with redis_server.client() as other:
        other.execute_command("CLIENT", "UNPAUSE")
