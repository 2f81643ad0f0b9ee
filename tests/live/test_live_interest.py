"""What pages watch reaches the reader: each page's watches are counted in its process's
registry, and the follower given that registry publishes it for the process that reads Redis."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from dashboard.services import registry as services_registry
from queues.cancelling import cancel_and_wait
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.settings import LiveSettings
from tests.support.live_reads import found_within, publish_nowhere

# Channels closes stale database connections around each websocket event.
pytestmark = pytest.mark.django_db(transaction=True)

INTEREST_KEY = "bullpen:live:interest"


async def test_a_follower_publishes_the_registry_it_is_given(redis_client: Any) -> None:
    registry = Interest()
    registry.watch_queue("mail")
    registry.watch_job("mail", "7")
    follower = Follower(publish_nowhere, registry, LiveSettings(lease_ttl_ms=2000))
    running = asyncio.ensure_future(follower.run())

    def published() -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in redis_client.hgetall(INTEREST_KEY).values()]

    try:
        [entry] = await found_within(published)
        assert entry["queues"] == ["mail"] and entry["jobs"] == [["mail", "7"]]
        assert not entry["overview"]
        # The only process here is the reader, and serves what its registry holds.
        await found_within(lambda: follower.leader and "mail" in follower.watching.queues)
        registry.unwatch_queue("mail")
        registry.watch_overview()
        [entry] = await found_within(lambda: [e for e in published() if e["overview"]])
        assert entry["queues"] == [] and entry["jobs"] == [["mail", "7"]]
    finally:
        await cancel_and_wait(running)


async def test_a_pages_watches_are_counted_in_its_process_until_it_closes(
    bullpen_settings: dict[str, Any],
) -> None:
    # A page watches queues this site knows: here, one it is configured to show.
    with override_settings(BULLPEN={**bullpen_settings, "QUEUES": ["mail"]}):
        socket = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
        connected, _ = await socket.connect()
        assert connected
        try:
            registry = channel_groups.interest()
            await socket.send_json_to({"watch": "overview"})
            await socket.send_json_to({"watch": "queue", "queue": "mail"})
            await socket.send_json_to({"watch": "job", "queue": "mail", "id": "7"})
            await found_within(lambda: registry.jobs)
            assert registry.overview == 1 and registry.queues == {"mail": 1}
            assert registry.jobs == {("mail", "7"): 1}
            await socket.disconnect()
            assert registry.empty
        finally:
            await channel_groups.stop()


async def test_a_new_supervisor_keeps_the_watches_of_the_pages_still_open() -> None:
    registry = channel_groups.interest()
    registry.watch_queue("mail")
    await cancel_and_wait(services_registry.task_of(channel_groups.LIVE_READER))
    try:
        assert channel_groups.interest() is registry
        assert channel_groups.ensure_started().leadership.registry is registry
    finally:
        await channel_groups.stop()
