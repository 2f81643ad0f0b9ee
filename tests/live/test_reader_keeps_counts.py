"""What the live reader keeps between views: each queue's last hour's failures while no event
of the queue came (a view reads them again only for the queues that changed), and every
queue's counts through a Redis timeout (50,000 queues' counts take minutes to read again)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient, override_settings
from django.urls import reverse
from redis.exceptions import TimeoutError as RedisTimeoutError

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from queues.reads.discovery import discovered
from tests.support.live_reads import (
    TRIES,
    _unread,
    counts_of,
    reader_vouching,
    run_peer,
    until,
    wait_for,
)
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

TENANTS = 50  # two queues each; every 25th tenant's first queue holds a failed job


@pytest.fixture
def alert_on_one_failure(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    """The failed_last_hour alert fires from one failure, so a page shows the count it read."""
    alerts = {**(bullpen_settings.get("ALERTS") or {}), "failed_last_hour": 0}
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": alerts}):
        yield


@pytest.fixture
async def watcher() -> AsyncIterator[WebsocketCommunicator]:
    """A socket watching the overview."""
    communicator = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_json_to({"watch": "overview"})
    yield communicator
    _unread.pop(id(communicator), None)
    await communicator.disconnect()
    await channel_groups.stop()


@pytest.fixture
async def many_queues(peer: Peer) -> None:
    await run_peer(peer, "many-queues", "--count", str(TENANTS), "--services", "mail,billing")


def failed_count_is(failed: int, message: dict[str, Any]) -> bool:
    return (counts_of(message, "t025-mail") or {}).get("failed") == failed


def calls(redis_client: Any) -> dict[str, int]:
    stats = redis_client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(entry["calls"]) for name, entry in stats.items()}


async def reader_knows_every_queue() -> None:
    # The test's own listing takes the 0.3 s timeout of the test below too: a loaded machine
    # may need a second try.
    for attempt in range(5):
        try:
            refs = list((await discovered()).queues)
            break
        except RedisTimeoutError:
            if attempt == 4:
                raise
            await asyncio.sleep(0.5)
    follower = channel_groups.ensure_started()

    def knows() -> bool:
        known, version = follower.known_summaries(refs)
        return version is not None and len(known) == len(refs)

    await until("the reader knows every queue's counts", knows, timeout=30)


async def zcounts_of_a_view(client: AsyncClient, redis_client: Any) -> tuple[int, int]:
    """The ``ZCOUNT``s of one view of the problems while the reader is current, and the
    failed_last_hour alert's value on t025-mail."""
    await reader_knows_every_queue()
    before = calls(redis_client).get("zcount", 0)
    response = await client.get(reverse("bullpen:api-queues") + "?problems=1&q=t025-mail")
    assert response.status_code == 200
    (queue,) = response.json()["queues"]
    (alert,) = [alert for alert in queue["alerts"] if alert["rule"] == "failed_last_hour"]
    return calls(redis_client).get("zcount", 0) - before, alert["value"]


async def test_a_view_reads_the_last_hour_failures_only_of_queues_that_changed(
    alert_on_one_failure: None,
    many_queues: None,
    watcher: WebsocketCommunicator,
    client: AsyncClient,
    redis_client: Any,
    peer: Peer,
) -> None:
    # t025-mail and t050-mail hold a failed job: the first view reads both.
    first, value = await zcounts_of_a_view(client, redis_client)
    assert value == 1
    # A view while nothing happened reads none (a view the reader could not vouch for, on a
    # loaded machine, reads them as before: one of three views must read none).
    again = [await zcounts_of_a_view(client, redis_client) for _ in range(3)]
    assert min(counted for counted, _ in again) == 0, (first, again)
    assert {value for _, value in again} == {1}

    # One more failure of t025-mail: that queue is read again, its alert says so, and the
    # other failing queue is not read again. Measured while the reader vouches all along (a
    # view it could not vouch for reads both, rightly): one more failure for each try.
    follower = channel_groups.ensure_started()
    refs = list((await discovered()).queues)
    why = []
    for failed in range(2, 2 + TRIES):
        await run_peer(peer, "add", "--queue", "t025-mail", "--name", "doomed", "--data", "{}")
        await run_peer(peer, "work", "--queue", "t025-mail", "--fail", "--count", "1")
        await wait_for(watcher, functools.partial(failed_count_is, failed))
        async with reader_vouching(follower, refs) as spell:
            counted, value = await zcounts_of_a_view(client, redis_client)
        assert value == failed
        if spell.held:
            assert counted == 1, counted
            return
        why.append(spell.why)
    raise AssertionError(f"the reader did not stay current through any of {TRIES} tries: {why}")


@pytest.fixture
def quick_timeout(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    """Redis commands time out after 0.3 s (a reader started after this takes it)."""
    with override_settings(BULLPEN={**bullpen_settings, "REDIS_TIMEOUT": 0.3}):
        yield


async def test_the_reader_keeps_its_counts_through_a_redis_timeout(
    quick_timeout: None,
    many_queues: None,
    watcher: WebsocketCommunicator,
    redis_client: Any,
) -> None:
    await reader_knows_every_queue()
    follower = channel_groups.ensure_started()
    era, read = follower.counts.era, calls(redis_client).get("zcard", 0)
    # Every client's commands wait 2 s: the reader's time out, and the pages are told Redis
    # is down, then up again.
    redis_client.execute_command("CLIENT", "PAUSE", "2000", "ALL")
    await wait_for(watcher, lambda m: m.get("type") == "status" and m["redis"] == "down")
    await wait_for(watcher, lambda m: m.get("type") == "status" and m["redis"] == "ok")
    await reader_knows_every_queue()
    # The same server answers: the counts are those held before, none read again.
    assert follower.counts.era == era
    assert calls(redis_client).get("zcard", 0) == read
