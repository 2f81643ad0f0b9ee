"""History of jobs that do not measure well: removed before they were read, stamped by a
clock behind, 10,000 job names, and a queue obliterated."""

from __future__ import annotations

import asyncio
from typing import Any

from bullmq import Queue
from django.test import AsyncClient

from queues.history.measure import UNKNOWN_NAME
from queues.history.read import read_history, read_names
from queues.history.recorder import HistoryRecorder
from queues.history.storage import FOLDED_NAME, NAME_CAP, names_key
from queues.reads.keys import QueueRef
from tests.history.history_support import AHEAD_MS, feed_events, flush_closed, now_ms
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

JOBS = QueueRef("bull", "jobs")


async def test_jobs_removed_at_once_are_counted_not_measured(peer: Peer, redis_client: Any) -> None:
    for _ in range(3):
        opts = '{"removeOnComplete": true}'
        await asyncio.to_thread(
            peer, "add", "--queue", "jobs", "--name", "n", "--data", "{}", "--opts", opts
        )
    await asyncio.to_thread(peer, "work", "--queue", "jobs", "--count", "3")
    assert redis_client.zcard("bull:jobs:completed") == 0
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, JOBS)
    await flush_closed(recorder, [])
    series = await read_history(JOBS, "1h", now_ms() + AHEAD_MS)
    assert series.totals.completed == 3
    assert series.totals.run_ms.p50 is None and series.totals.wait_ms.p50 is None
    [row] = (await read_names(JOBS, "1h", now_ms() + AHEAD_MS)).names
    assert (row.name, row.completed) == (UNKNOWN_NAME, 3)


async def test_clocks_behind_drop_negative_waits_and_keep_the_counts(
    peer: Peer, redis_client: Any
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "jobs", "--name", "n", "--count", "4")
    # The worker's clock is ten minutes behind the producer's: every wait is negative.
    await asyncio.to_thread(
        peer,
        "work",
        "--queue",
        "jobs",
        "--count",
        "4",
        "--clock-behind-ms",
        "600000",
        "--delay-ms",
        "5",
    )
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, JOBS)
    await flush_closed(recorder, [])
    assert recorder.stats["negative"] == 4
    series = await read_history(JOBS, "1h", now_ms() + AHEAD_MS)
    assert series.totals.completed == 4  # placed in the minute they were read in, not lost
    assert series.totals.wait_ms.p50 is None
    assert series.totals.run_ms.p50 is not None and series.totals.run_ms.p50 >= 5


async def test_ten_thousand_job_names_are_capped(
    peer: Peer, redis_client: Any, redis_server: RedisServer
) -> None:
    queue = Queue("jobs", {"connection": redis_server.url})
    try:
        for start in range(0, 10_000, 2_000):
            await queue.addBulk(
                [{"name": f"kind-{i}", "data": {}} for i in range(start, start + 2_000)]
            )
    finally:
        await queue.close()
    await asyncio.to_thread(
        peer, "work", "--queue", "jobs", "--count", "10000", "--concurrency", "100", timeout=180
    )
    recorder = HistoryRecorder()
    # No event read: a reader that starts finds them all in the completed set.
    await flush_closed(recorder, [JOBS])
    table = await read_names(JOBS, "1h", now_ms() + AHEAD_MS)
    assert table.folded_names
    assert len(table.names) == NAME_CAP + 1
    assert sum(row.completed for row in table.names) == 10_000
    folded = next(row for row in table.names if row.name == FOLDED_NAME)
    assert folded.completed == 10_000 - NAME_CAP
    assert redis_client.scard(names_key(JOBS)) == NAME_CAP


async def test_an_obliterated_queues_history_is_kept_until_it_expires(
    client: AsyncClient, peer: Peer, redis_client: Any, redis_server: RedisServer
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "jobs", "--name", "n", "--count", "2")
    await asyncio.to_thread(peer, "work", "--queue", "jobs", "--count", "2")
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, JOBS)
    await flush_closed(recorder, [])
    queue = Queue("jobs", {"connection": redis_server.url})
    try:
        await queue.obliterate(force=True)
    finally:
        await queue.close()
    assert not redis_client.keys("bull:jobs:*")
    # The queue is gone from the dashboard (404), its history stays for its time.
    assert (await client.get("/queues/api/queues/jobs/history/")).status_code == 404
    assert (await read_history(JOBS, "24h", now_ms() + AHEAD_MS)).totals.completed == 2
    await asyncio.to_thread(peer, "add-bulk", "--queue", "jobs", "--name", "n", "--count", "1")
    body = (await client.get("/queues/api/queues/jobs/history/?range=24h")).json()
    assert body["totals"]["completed"] == 2 and body["oldest_waiting_ms"] is not None
