"""Live counts around an exact re-read, over the websocket with real Redis and Node BullMQ: the
events a re-read already holds move nothing when the reader takes them afterwards, so a page
never shows a count Redis never had after a bulk action."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient, override_settings

from dashboard.live import channel_groups as live
from dashboard.live.consumers import LiveConsumer
from queues.live.count_changes import LiveCounts
from queues.live.events import parse_entry
from queues.live.outbox import Outbox
from queues.live.protocol import LiveMessage, Topic
from queues.live.watching import Watching
from queues.reads.keys import QueueRef
from tests.support.action_requests import post
from tests.support.action_waits import accepted, finished
from tests.support.live_reads import counts_of
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

JOBS = 6  # in each of two failure groups


async def seed_two_groups(peer: Peer, queue: str) -> None:
    """``JOBS`` jobs failed by a real Node worker with one error, ``JOBS`` with another."""
    for error in ("card declined", "mailbox full"):
        data = json.dumps({"error": error})
        await asyncio.to_thread(
            peer, "add-bulk", "--queue", queue, "--name", "n", "--count", str(JOBS), "--data", data
        )
    await asyncio.to_thread(
        peer, "work", "--queue", queue, "--count", str(2 * JOBS), "--fail", "--concurrency", "12"
    )


@pytest.fixture
async def lagging_socket(bullpen_settings: dict[str, Any]) -> AsyncIterator[WebsocketCommunicator]:
    """A socket served by a reader that pauses 2 s after each read that returned events, while
    a changed queue is re-read exactly 0.3 s after its first event: the re-read then holds
    events the reader takes only afterwards, as under load, when a re-read and a burst of
    events overlap."""
    lagging = {"read_pause": 2.0, "resync_interval": 0.3}
    with override_settings(BULLPEN={**bullpen_settings, "LIVE": lagging}):
        communicator = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
        connected, _ = await communicator.connect()
        assert connected
        yield communicator
        await communicator.disconnect()
        await live.stop()


async def shown_counts(
    socket: WebsocketCommunicator, slug: str, seconds: float
) -> list[dict[str, int]]:
    """Every count of ``slug`` the socket receives within ``seconds`` (read from the
    communicator's queue: a timed-out receive would cancel the consumer)."""
    shown: list[dict[str, int]] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            raw = await asyncio.wait_for(socket.output_queue.get(), left)
        except TimeoutError:
            break
        if raw.get("type") != "websocket.send":
            continue
        message = json.loads(raw["text"])
        for one in message["messages"] if message.get("type") == "batch" else [message]:
            counts = counts_of(one, slug)
            if counts is not None:
                shown.append(counts)
    return shown


async def test_a_group_retry_shows_only_counts_redis_had(
    lagging_socket: WebsocketCommunicator, client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await seed_two_groups(peer, "grp")
    await lagging_socket.send_json_to({"watch": "queue", "queue": "grp"})
    # The reader may have read the queue while the seeding's worker ran and pauses 2 s after
    # each read that returned events: its first figures can be that earlier one, which Redis
    # had. The page shows every failure within a few of those pauses.
    before: list[dict[str, int]] = []
    deadline = time.monotonic() + 10
    while not (before and before[-1]["failed"] == 2 * JOBS):
        assert time.monotonic() < deadline, before
        before += await shown_counts(lagging_socket, "grp", 1.0)
    # Wait until the reader, past its pause after the seeding's events, has read the stream
    # to its end once: the retry's first event then wakes it alone, and it pauses again.
    quiet_since = time.monotonic()
    reader = live.ensure_started().streams
    while reader.caught_up_at <= quiet_since:
        assert time.monotonic() - quiet_since < 10, "the reader never caught up"
        await asyncio.sleep(0.05)

    groups = (await client.get("/queues/api/queues/grp/failure-groups/")).json()["groups"]
    (group,) = [g for g in groups if "card declined" in g["signature"]]
    body = accepted(
        await post(client, "queues/grp/failure-groups/retry/", {"signature": group["signature"]})
    )
    assert (await finished(client, body))["count"] == JOBS
    assert redis_client.zcard("bull:grp:failed") == JOBS
    assert redis_client.llen("bull:grp:wait") == JOBS

    # Long enough for the reader to take every event and for the re-reads that follow.
    shown = await shown_counts(lagging_socket, "grp", 5.0)
    assert shown, "no counts after the retry"
    # Nothing but one group's retries happened: every figure shown is one Redis passed
    # through, ...
    wrong = [c for c in shown if c["failed"] + c["waiting"] != 2 * JOBS or c["failed"] < JOBS]
    assert not wrong, shown
    # ... and the last one is where it ended.
    assert (shown[-1]["failed"], shown[-1]["waiting"]) == (JOBS, JOBS), shown


async def test_an_event_taken_while_a_read_is_in_flight_lands_on_the_read(
    peer: Peer, redis_client: Any
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "n", "--count", "3")
    ref = QueueRef("bull", "mail")

    async def publish(topic: Topic, message: LiveMessage) -> None:
        return None

    counts = LiveCounts(Outbox(publish, lambda: None), Watching(), 0.25, 5.0)
    reading = asyncio.create_task(counts.read_exact([ref]))
    await asyncio.sleep(0)  # the read is sent and waits for its answer
    assert not reading.done()
    # A worker takes a job meanwhile: its event comes after everything the read holds.
    (tail,) = redis_client.xrevrange(ref.key("events"), count=1)
    after = f"{int(str(tail[0]).split('-')[0]) + 1}-0"
    counts.take(ref, parse_entry(after, {"event": "active", "jobId": "1", "prev": "waiting"}))
    await reading
    shown = counts.estimates.counts(ref)
    assert (shown["waiting"], shown["active"]) == (2, 1), shown
