"""Bulk actions with the queues' Redis at maxmemory (``noeviction``): actions that remove jobs
run, since removing is how an operator frees memory; the others are refused in words."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
from django.test import AsyncClient

from tests.support.action_requests import post
from tests.support.action_waits import accepted, finished
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


async def node(peer: Peer, *args: str) -> Any:
    return await asyncio.to_thread(peer, *args)


def fill_up(redis_client: Any) -> None:
    """Redis refuses writes that need memory from now: its limit is set where the memory in
    use is, then lowered until a small write is refused (other clients' buffers come and go,
    so the memory in use a moment ago may leave room for a write)."""
    redis_client.config_set("maxmemory-policy", "noeviction")
    limit = int(redis_client.info("memory")["used_memory"])
    for _ in range(64):
        redis_client.config_set("maxmemory", str(limit))
        try:
            redis_client.set("bullpen-test:oom-probe", "x" * 64)
        except redis.exceptions.OutOfMemoryError:
            return
        redis_client.delete("bullpen-test:oom-probe")
        limit -= 4096
    raise AssertionError("Redis took every write however low its memory limit")


def counts(peer: Peer, queue: str) -> dict[str, int]:
    found: dict[str, int] = peer("inspect", "--queue", queue)["countsAll"]
    return found


async def test_at_maxmemory_removals_run_and_the_others_say_redis_is_full(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add-bulk", "--queue", "full", "--name", "n", "--count", "3")
    await node(peer, "work", "--queue", "full", "--count", "3")  # 3 completed
    await node(peer, "add-bulk", "--queue", "full", "--name", "n", "--count", "4")
    await node(peer, "work", "--queue", "full", "--count", "4", "--fail")  # 4 failed
    for _ in range(2):
        opts = '{"delay": 3600000}'
        await node(
            peer, "add", "--queue", "full", "--name", "later", "--data", "{}", "--opts", opts
        )
    await node(peer, "add-bulk", "--queue", "spare", "--name", "n", "--count", "3")
    await node(peer, "add-bulk", "--queue", "gone", "--name", "n", "--count", "2")
    assert (await post(client, "queues/gone/pause/")).status_code == 200
    groups = (await client.get("/queues/api/queues/full/failure-groups/")).json()["groups"]
    before = counts(peer, "full")
    assert (before["completed"], before["failed"], before["delayed"]) == (3, 4, 2)

    # From now on Redis refuses every write that needs memory.
    fill_up(redis_client)
    try:
        # What needs memory is refused, saying why in words.
        for path in ("queues/full/retry/?state=failed", "queues/full/promote/"):
            refused = await post(client, path)
            assert refused.status_code == 503, refused.content[:300]
            error = refused.json()["error"]
            assert "Redis is full" in error and "maxmemory" in error, error
            assert "pipeline" not in error and "Command #" not in error, error
        # What removes jobs runs: clean, a failure group's removal, removing matches.
        cleaned = await post(client, "queues/full/clean/?state=completed&grace_ms=0")
        status = await finished(client, accepted(cleaned))
        assert (status["state"], status["count"]) == ("done", 3), status
        removed = await post(
            client, "queues/full/failure-groups/remove/", {"signature": groups[0]["signature"]}
        )
        status = await finished(client, accepted(removed))
        assert (status["state"], status["count"]) == ("done", 4), status
        matches = await post(client, "queues/full/search/remove/?q=later&state=delayed")
        status = await finished(client, accepted(matches))
        assert (status["state"], status["count"]) == ("done", 2), status
        # And a queue's empty and obliterate.
        emptied = await post(client, "queues/spare/empty/")
        assert emptied.status_code == 200, emptied.content[:300]
        gone = await post(client, "queues/gone/obliterate/", {"confirm": "gone"})
        assert gone.status_code == 200, gone.content[:300]
    finally:
        redis_client.config_set("maxmemory", "0")
    after = counts(peer, "full")
    assert (after["completed"], after["failed"], after["delayed"]) == (0, 0, 0)
    assert counts(peer, "spare")["waiting"] == 0
    assert sum(counts(peer, "gone").values()) == 0
