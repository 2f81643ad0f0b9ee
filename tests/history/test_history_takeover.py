"""The live reader records history with nobody watching, and a lease takeover between two
readers counts every job once: the new reader back-fills what the old one had not written."""

from __future__ import annotations

import asyncio
from typing import Any

from queues.cancelling import cancel_and_wait
from queues.history.read import read_history
from queues.history.recorder import HistoryRecorder
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.settings import LiveSettings
from queues.reads.keys import QueueRef
from tests.history.history_support import AHEAD_MS, flush_closed, now_ms
from tests.support.live_reads import found_within, publish_nowhere
from tests.support.peer import Peer

IMG = QueueRef("bull", "img")


def held(recorder: HistoryRecorder | None) -> int:
    """Completed jobs a reader holds, written or not yet."""
    assert recorder is not None
    return sum(r.completed for span in recorder.open.get(IMG, {}).values() for r in span.values())


async def test_a_takeover_records_every_job_once(peer: Peer, redis_client: Any) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "img", "--name", "resize", "--count", "10")
    first = Follower(publish_nowhere, Interest(), LiveSettings(lease_ttl_ms=1000))
    running = asyncio.ensure_future(first.run())
    second_running = None
    try:
        # No page watches anything: the reader follows the queue all the same.
        await found_within(lambda: first.leader and first.streams.follows(IMG), within=30)
        await found_within(
            lambda: first.history is not None and IMG in first.history.backfilled, within=30
        )
        await asyncio.to_thread(peer, "work", "--queue", "img", "--count", "10", "--delay-ms", "5")
        await found_within(lambda: held(first.history) == 10 and not first.history.noted, within=30)  # type: ignore[union-attr]
        second = Follower(publish_nowhere, Interest(), LiveSettings(lease_ttl_ms=1000))
        second_running = asyncio.ensure_future(second.run())
        await cancel_and_wait(running)  # the first reader stops and hands the lease back
        await found_within(lambda: second.leader and second.streams.follows(IMG), within=30)
        await found_within(
            lambda: second.history is not None and IMG in second.history.backfilled, within=30
        )
        await asyncio.to_thread(
            peer, "add-bulk", "--queue", "img", "--name", "resize", "--count", "5"
        )
        await asyncio.to_thread(peer, "work", "--queue", "img", "--count", "5", "--delay-ms", "5")
        # Read: the 10 it back-filled and the 5 whose events it took.
        await found_within(
            lambda: second.history.stats["reads"] >= 15 and not second.history.noted, within=30
        )  # type: ignore[union-attr]
        await cancel_and_wait(second_running)
        assert second.history is not None
        await flush_closed(second.history, [])
    finally:
        await cancel_and_wait(running)
        if second_running is not None:
            await cancel_and_wait(second_running)
    series = await read_history(IMG, "1h", now_ms() + AHEAD_MS)
    assert series.totals.completed == 15
    assert series.totals.run_ms.p50 is not None and series.totals.run_ms.p50 >= 5
