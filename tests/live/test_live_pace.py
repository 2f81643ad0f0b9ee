"""The reader's pace over the websocket, with real Redis and Node BullMQ: events after a quiet
spell reach the page without waiting out a batch, and a row the reader reads in full carries
its due time only when it is delayed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from tests.support.live_reads import _unread, counts_of, run_peer, wait_for
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

# Longer than the wait for the second job: a reader that paused this long after a read that
# returned events would not show it in time.
LONG_PAUSE = 20.0
# A loaded machine's wait for a row: a retried job's events come from two scripts.
ROW_WAIT = 35.0


@contextlib.asynccontextmanager
async def live_socket(
    bullpen_settings: dict[str, Any], live: dict[str, Any]
) -> AsyncIterator[WebsocketCommunicator]:
    with override_settings(BULLPEN={**bullpen_settings, "LIVE": live}):
        communicator = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
        connected, _ = await communicator.connect()
        assert connected
        yield communicator
        _unread.pop(id(communicator), None)
        try:
            # A test that failed may leave the consumer cancelled: its close must not fail
            # the teardown, which would leave the next test of this process without one.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await communicator.disconnect()
        finally:
            await channel_groups.stop()


@pytest.fixture
async def slow_batch_socket(
    bullpen_settings: dict[str, Any],
) -> AsyncIterator[WebsocketCommunicator]:
    """A socket served by a reader whose batches are two minutes long, blocking 0.2 s at a
    time while the streams are quiet; every changed row read in full."""
    live = {"read_pause": LONG_PAUSE, "block_ms": 200, "row_reads_per_second": 10_000}
    async with live_socket(bullpen_settings, live) as communicator:
        yield communicator


@pytest.fixture
async def full_rows_socket(
    bullpen_settings: dict[str, Any],
) -> AsyncIterator[WebsocketCommunicator]:
    """A socket served by a reader at the default pace that reads every changed row in full.
    Not the slow batches: a retried job's events, read in two reads on a loaded machine, waited
    out a whole long pause (40 s in a suite run) for nothing this test looks at."""
    live = {"row_reads_per_second": 10_000}
    async with live_socket(bullpen_settings, live) as communicator:
        yield communicator


async def watch_followed_queue(socket: WebsocketCommunicator, peer: Peer, queue: str) -> None:
    """Watch ``queue`` (one job in it) and wait until the reader follows its stream."""
    await run_peer(peer, "add", "--queue", queue, "--name", "seed", "--data", "{}")
    await socket.send_json_to({"watch": "queue", "queue": queue})
    await wait_for(socket, lambda m: (counts_of(m, queue) or {}).get("waiting") == 1)
    follower = channel_groups.ensure_started()
    deadline = time.monotonic() + 10
    while not any(ref.name == queue for ref in follower.streams.refs.values()):
        assert time.monotonic() < deadline, "the reader never followed the queue"
        await asyncio.sleep(0.05)


def row_of(job_id: str) -> Any:
    return lambda m: m["type"] == "rows" and any(r["id"] == job_id for r in m["rows"])


async def test_jobs_added_one_after_the_other_reach_a_page_without_a_batch_wait(
    slow_batch_socket: WebsocketCommunicator, peer: Peer
) -> None:
    socket = slow_batch_socket
    await watch_followed_queue(socket, peer, "calm")
    first = await run_peer(peer, "add", "--queue", "calm", "--name", "one", "--data", '{"n": 1}')
    shown_first, _ = await wait_for(socket, row_of(first["id"]))
    # The second job is added only once the page shows the first: the reader read the
    # first's events (one script writes a job's events: one read) after a quiet spell, so it
    # reads on at once instead of pausing.
    second = await run_peer(peer, "add", "--queue", "calm", "--name", "two", "--data", '{"n": 2}')
    shown_second, between = await wait_for(socket, row_of(second["id"]), timeout=12)

    (row,) = [r for r in shown_first["rows"] if r["id"] == first["id"]]
    assert row["state"] == "waiting" and '<td class="job-name">one</td>' in row["html"]
    (row,) = [r for r in shown_second["rows"] if r["id"] == second["id"]]
    assert row["state"] == "waiting" and '<td class="job-name">two</td>' in row["html"]
    # The first job's row is not sent again after the second's events.
    assert not any(row_of(first["id"])(m) for m in between)


async def test_a_retried_jobs_row_shows_when_its_backoff_ends(
    full_rows_socket: WebsocketCommunicator, peer: Peer, redis_client: Any
) -> None:
    """Its due time is read from the delayed set: its hash's ``timestamp + delay`` (the job was
    added two days ago) is not it. A waiting job's row has no due time to read."""
    socket = full_rows_socket
    await watch_followed_queue(socket, peer, "later")
    retry = await run_peer(
        peer,
        "retry-later",
        *("--queue", "later", "--name", "charge", "--backoff-ms", str(30 * 60_000)),
        *("--added-ms-ago", str(2 * 86_400_000)),
    )
    shown, _ = await wait_for(
        socket,
        lambda m: (
            m["type"] == "rows"
            and any(r["id"] == retry["id"] and r["state"] == "delayed" for r in m["rows"])
        ),
        timeout=ROW_WAIT,
    )
    (row,) = [r for r in shown["rows"] if r["id"] == retry["id"]]
    due = int(redis_client.zscore("bull:later:delayed", retry["id"])) >> 12
    assert 'data-field="dueAt" data-label="Runs"><time datetime=' in row["html"]
    assert f'data-ms="{due}"' in row["html"]

    waiting = await run_peer(peer, "add", "--queue", "later", "--name", "now", "--data", "{}")
    shown, _ = await wait_for(socket, row_of(waiting["id"]), timeout=ROW_WAIT)
    (row,) = [r for r in shown["rows"] if r["id"] == waiting["id"]]
    assert row["state"] == "waiting" and 'data-field="dueAt"' not in row["html"]
