"""With no page open, the reader that records history still finds queues created after it
started, but looks for them now and then rather than every second: an idle reader's cost
stays a few commands a minute."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from django.test import override_settings

from queues.cancelling import cancel_and_wait
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.protocol import LiveMessage, Topic
from queues.live.settings import LiveSettings
from tests.support.live_reads import found_within, publish_nowhere
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


def scans(redis_client: Any) -> int:
    return int(redis_client.info("commandstats").get("cmdstat_scan", {}).get("calls", 0))


async def test_an_unwatched_reader_finds_new_queues_without_scanning_every_second(
    bullpen_settings: dict[str, Any], redis_client: Any, peer: Peer
) -> None:
    # Discovery serves its cached list all along: every SCAN here is the new-queue walk's.
    settings = {**bullpen_settings, "DISCOVERY_INTERVAL": 3600, "HISTORY_RECORDING": True}
    live = LiveSettings(lease_ttl_ms=2000, new_queue_scan_unwatched=3.0)
    with override_settings(BULLPEN=settings):
        follower = Follower(publish_nowhere, Interest(), live)
        running = asyncio.ensure_future(follower.run())
        try:
            await found_within(lambda: follower.leader and scans(redis_client) >= 1)
            before = scans(redis_client)
            started = time.monotonic()
            # A queue created now, with nobody watching anything, is followed all the same.
            await asyncio.to_thread(peer, "add", "--queue", "late", "--name", "n", "--data", "{}")
            await found_within(
                lambda: any(r.name == "late" for r in follower.streams.refs.values())
            )
            # Watched over 6 s: one step of the walk every 3 s (a small keyspace: one SCAN a
            # step), where a walk every second would take six.
            await asyncio.sleep(max(0.0, 6.0 - (time.monotonic() - started)))
            seconds = time.monotonic() - started
            walked = scans(redis_client) - before
            assert walked <= seconds / 3.0 + 1, (walked, seconds)
        finally:
            await cancel_and_wait(running)


COUNT_READS = ("cmdstat_zcard", "cmdstat_llen", "cmdstat_zcount")


async def test_with_no_page_open_history_records_and_no_counts_are_read(
    bullpen_settings: dict[str, Any], redis_client: Any, peer: Peer
) -> None:
    for _ in range(3):
        peer("add", "--queue", "nightly", "--name", "n", "--data", "{}")
    sent: list[LiveMessage] = []

    async def collect(topic: Topic, message: LiveMessage) -> None:
        sent.append(message)

    registry = Interest()
    settings = {**bullpen_settings, "HISTORY_RECORDING": True}
    with override_settings(BULLPEN=settings):
        # Queues not read for a second are due a re-read: one a second while anyone watches.
        live = LiveSettings(lease_ttl_ms=2000, full_refresh=1.0)
        follower = Follower(collect, registry, live)
        follower.watching.IDLE_AFTER = 0.5  # idle soon after nobody watches, not after 30 s
        assert follower.history is not None
        running = asyncio.ensure_future(follower.run())
        try:
            await found_within(
                lambda: (
                    follower.leader
                    and follower.watching.idle
                    and any(ref.name == "nightly" for ref in follower.streams.refs.values())
                )
            )
            await asyncio.to_thread(peer, "work", "--queue", "nightly", "--count", "3")
            # Recorded: one hash read a finished job.
            await found_within(
                lambda: follower.history is not None and follower.history.stats["reads"] >= 3
            )
            # And over 3 s with nobody watching, no queue's counts are read.
            redis_client.config_resetstat()
            await asyncio.sleep(3.0)
            stats = redis_client.info("commandstats")
            assert stats.get("cmdstat_xread", {}).get("calls", 0) >= 1  # the streams are read
            assert {name: stats[name]["calls"] for name in COUNT_READS if name in stats} == {}

            # A page comes: it gets the queue's counts as Redis holds them.
            sent.clear()
            registry.watch_queue("nightly")

            def counts_sent() -> dict[str, int] | None:
                for message in reversed(sent):
                    inner = message["messages"] if message["type"] == "batch" else [message]
                    for one in inner:
                        for entry in one.get("queues", []) if one["type"] == "counts" else []:
                            if entry["slug"] == "nightly":
                                return dict(entry["counts"])
                return None

            counts = await found_within(counts_sent)
            assert counts.get("completed") == 3 and not counts.get("waiting"), counts
        finally:
            await cancel_and_wait(running)
