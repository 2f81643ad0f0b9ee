"""The process's hub and the reader's heartbeat: a page that was sent an update lately does
not need a beat too, one that heard nothing gets it, and news about Redis goes to every page."""

from __future__ import annotations

import asyncio
import json

import pytest

from dashboard.live import channel_groups, fanout
from queues.live import protocol


async def test_beats_go_only_to_pages_that_heard_nothing_lately(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heard: dict[str, list[str]] = {"busy": [], "quiet": []}

    def page(name: str) -> fanout.Deliver:
        async def deliver(group: str, text: str) -> None:
            heard[name].append(json.loads(text)["type"])

        return deliver

    busy, quiet = page("busy"), page("quiet")
    hub = fanout.hub()
    status = channel_groups.group_name(("status",))
    for deliver in (busy, quiet):
        await hub.join(status, deliver, "reader")
    await hub.join(channel_groups.group_name(("queue", "mail")), busy, "reader")

    async def settled(count: int) -> None:
        for _ in range(200):
            if sum(map(len, heard.values())) >= count:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"expected {count} deliveries, had {heard}")

    try:
        await channel_groups.publish(("queue", "mail"), protocol.counts_message([], 0))
        await settled(1)
        await channel_groups.publish(("status",), protocol.status_message(True, beat=True))
        await settled(2)
        assert heard == {"busy": ["counts"], "quiet": ["status"]}

        # Redis going away is news for every page, however lately it heard from the server.
        await channel_groups.publish(("status",), protocol.status_message(False, "refused"))
        await settled(4)
        assert heard == {"busy": ["counts", "status"], "quiet": ["status", "status"]}

        # Long enough after its last update, the busy page gets the beat as well.
        monkeypatch.setattr(fanout, "BEAT_NOT_NEEDED_WITHIN", 0.05)
        await asyncio.sleep(0.1)
        await channel_groups.publish(("status",), protocol.status_message(True, beat=True))
        await settled(6)
        assert heard["busy"][-1] == "status" and len(heard["quiet"]) == 3

        await hub.leave(status, busy)
        assert busy in hub.last_sent  # still watches the queue
        await hub.leave(channel_groups.group_name(("queue", "mail")), busy)
        await hub.leave(status, quiet)
        assert not hub.last_sent  # nothing kept for pages that are gone
    finally:
        await fanout.close()
