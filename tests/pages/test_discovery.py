"""Queue discovery: SCAN for meta and id keys under each prefix, plus configured names."""

from __future__ import annotations

import asyncio
from typing import Any

from django.test import AsyncClient, override_settings

from queues.live import seen_queues
from queues.reads import discovery
from queues.reads.discovery import queue_name_of_key
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.redis.clients import get_client
from tests.support.peer import Peer


def test_queue_name_of_key_parsing() -> None:
    assert queue_name_of_key("bull", "bull:mail:meta") == "mail"
    assert queue_name_of_key("bull", "bull:mail:id") == "mail"
    assert queue_name_of_key("bull", "bull:mail:idle-job") is None
    # A job id named "meta" in a queue "mail:5"? BullMQ refuses ":" in queue names.
    assert queue_name_of_key("bull", "bull:mail:5:meta") is None
    assert queue_name_of_key("my:app", "my:app:q:meta") == "q"
    assert queue_name_of_key("bull", "other:q:meta") is None


async def test_discovers_by_meta_or_id_and_ignores_other_keys(
    client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    redis_client.hset("bull:with-meta:meta", "opts.maxLenEvents", "10000")
    redis_client.set("bull:with-id:id", "12")
    redis_client.hset("bull:with-id:meteor", "name", "a job whose id starts like meta")
    redis_client.set("unrelated:key", "x")
    redis_client.hset("[odd]*:q1:meta", "paused", "1")
    config = {**bullpen_settings, "PREFIXES": ["bull", "[odd]*"], "QUEUES": ["configured"]}
    with override_settings(BULLPEN=config):
        body = (await client.get("/queues/api/queues/")).json()
    found = {(q["prefix"], q["name"], q["slug"]) for q in body["queues"]}
    assert found == {
        ("bull", "with-meta", "with-meta"),
        ("bull", "with-id", "with-id"),
        ("bull", "configured", "configured"),
        ("[odd]*", "q1", "[odd]*:q1"),
    }
    odd = next(q for q in body["queues"] if q["prefix"] == "[odd]*")
    assert odd["paused"] is True


async def test_second_prefix_queue_pages(
    client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    redis_client.hset("app:bull:jobs:1", mapping={"name": "n", "data": "{}", "timestamp": "1"})
    redis_client.lpush("app:bull:jobs:wait", "1")
    redis_client.set("app:bull:jobs:id", "1")
    with override_settings(BULLPEN={**bullpen_settings, "PREFIXES": ["bull", "app:bull"]}):
        response = await client.get("/queues/api/queues/app:bull:jobs/jobs/")
        assert response.status_code == 200
        assert [j["id"] for j in response.json()["jobs"]] == ["1"]
        detail = await client.get("/queues/q/app:bull:jobs/jobs/1/")
        assert detail.status_code == 200


async def test_legacy_paused_list_is_counted(client: AsyncClient, redis_client: Any) -> None:
    # A queue paused under BullMQ 5 keeps its jobs in a separate "paused" list.
    redis_client.hset("bull:old:meta", "paused", "1")
    redis_client.hset("bull:old:1", mapping={"name": "n", "data": "{}", "timestamp": "1"})
    redis_client.lpush("bull:old:paused", "1")
    body = (await client.get("/queues/api/queues/")).json()
    assert body["queues"][0]["counts"]["paused"] == 1
    page = await client.get("/queues/api/queues/old/jobs/?state=paused")
    assert [j["id"] for j in page.json()["jobs"]] == ["1"]
    detail = await client.get("/queues/api/queues/old/jobs/1/")
    assert detail.json()["state"] == "waiting"


async def test_a_queue_the_reader_saw_obliterated_leaves_every_process_list_before_the_scan(
    client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any], peer: Peer
) -> None:
    """The reader of one process writes what it saw obliterated; another process, whose scan
    is kept for 30 s, stops listing it within ``SEEN_READ_EVERY``, and lists it again once the
    reader sees it created anew."""
    await asyncio.to_thread(peer, "add", "--queue", "doomed", "--name", "n", "--data", "{}")
    await asyncio.to_thread(peer, "add", "--queue", "kept", "--name", "n", "--data", "{}")

    async def listed() -> set[str]:
        body = (await client.get("/queues/api/queues/")).json()
        return {queue["name"] for queue in body["queues"]}

    with override_settings(BULLPEN={**bullpen_settings, "DISCOVERY_INTERVAL": 30}):
        assert await listed() == {"doomed", "kept"}
        await asyncio.to_thread(peer, "obliterate", "--queue", "doomed")
        ref = QueueRef("bull", "doomed", connections.default_name())
        redis = get_client(ref.connection)
        await seen_queues.note(redis, ref.connection, [ref], gone=True)
        await asyncio.sleep(discovery.SEEN_READ_EVERY)
        assert await listed() == {"kept"}
        await asyncio.to_thread(peer, "add", "--queue", "doomed", "--name", "n", "--data", "{}")
        await seen_queues.note(redis, ref.connection, [ref])
        await asyncio.sleep(discovery.SEEN_READ_EVERY)
        assert await listed() == {"doomed", "kept"}
