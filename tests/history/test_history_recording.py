"""Recording job history from what real Node BullMQ workers write: exact counts, percentiles
within 2 % of the jobs' own timestamps, failure rates, the per-name table, and a reader that
starts again without counting a job twice."""

from __future__ import annotations

import asyncio
from typing import Any

from queues.history.read import read_history, read_names
from queues.history.recorder import HistoryRecorder
from queues.history.storage import span_key
from queues.reads.keys import QueueRef
from queues.redis.clients import get_client
from tests.history.history_support import (
    AHEAD_MS,
    exact,
    feed_events,
    flush_closed,
    now_ms,
    own_durations,
    within,
)
from tests.support.peer import Peer

IMG = QueueRef("bull", "img")


def run_jobs(peer: Peer, name: str, count: int, *flags: str) -> None:
    peer("add-bulk", "--queue", "img", "--name", name, "--count", str(count))
    peer("work", "--queue", "img", "--count", str(count), *flags)


async def test_counts_percentiles_and_names_match_the_jobs(peer: Peer, redis_client: Any) -> None:
    await asyncio.to_thread(run_jobs, peer, "resize", 40, "--delay-ms", "30", "--concurrency", "2")
    await asyncio.to_thread(run_jobs, peer, "thumb", 20, "--delay-ms", "5")
    await asyncio.to_thread(run_jobs, peer, "resize", 5, "--fail")
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, IMG)
    await flush_closed(recorder, [])
    assert recorder.stats["reads"] == 65  # one hash read per finished job, none per other event

    series = await read_history(IMG, "1h", now_ms() + AHEAD_MS)
    totals = series.totals
    assert (totals.completed, totals.failed) == (60, 5)
    assert totals.failure_rate == 5 / 65
    assert sum(point.completed for point in series.points) == 60
    assert len(series.points) == 60 and series.step_s == 60
    waits, runs = own_durations(redis_client, "img", "completed")
    failed_waits, failed_runs = own_durations(redis_client, "img", "failed")
    for q, field in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
        assert within(getattr(totals.run_ms, field), exact(runs + failed_runs, q))
        assert within(getattr(totals.wait_ms, field), exact(waits + failed_waits, q))

    table = await read_names(IMG, "24h", now_ms() + AHEAD_MS)
    rows = {row.name: row for row in table.names}
    assert set(rows) == {"resize", "thumb"} and not table.folded_names
    assert (rows["resize"].completed, rows["resize"].failed) == (40, 5)
    assert rows["resize"].failure_rate == 5 / 45
    assert (rows["thumb"].completed, rows["thumb"].failed, rows["thumb"].failure_rate) == (20, 0, 0)
    slowest = rows["resize"].slowest
    assert len(slowest) == 3 and slowest[0].run_ms == max(runs[:40] + failed_runs)
    job = redis_client.hgetall(f"bull:img:{slowest[0].id}")
    assert job["name"] == "resize"
    assert int(job["finishedOn"]) - int(job["processedOn"]) == slowest[0].run_ms
    # Hours and days of the same jobs, made from the minutes before any roll-up.
    for range_name in ("7d", "90d"):
        wide = await read_history(IMG, range_name, now_ms() + AHEAD_MS)
        assert (wide.totals.completed, wide.totals.failed) == (60, 5)
        assert wide.totals.run_ms == totals.run_ms


async def test_a_reader_that_starts_again_back_fills_without_counting_twice(
    peer: Peer, redis_client: Any
) -> None:
    await asyncio.to_thread(run_jobs, peer, "resize", 10, "--delay-ms", "5")
    # The first reader noted these events but stopped before their minute closed.
    first = HistoryRecorder()
    seen = feed_events(first, redis_client, IMG)
    await first.flush(get_client(), [IMG], now_ms())
    assert not [key for key in redis_client.keys("bullpen:hist:*") if ":m:" in key]
    # The next one follows the stream from its end and back-fills from the completed set,
    # while more jobs finish: those it gets both ways are counted once.
    second = HistoryRecorder()
    await asyncio.to_thread(run_jobs, peer, "resize", 7, "--delay-ms", "5")
    feed_events(second, redis_client, IMG, after=seen)
    await flush_closed(second, [IMG])
    series = await read_history(IMG, "1h", now_ms() + AHEAD_MS)
    assert series.totals.completed == 17
    # A third reader, after those minutes were written, adds nothing more.
    third = HistoryRecorder()
    await flush_closed(third, [IMG])
    assert (await read_history(IMG, "1h", now_ms() + AHEAD_MS)).totals.completed == 17
    # Each minute was written whole, once: its summary kept a day, its sketches until its hour
    # is rolled up and the last hours' totals read hours.
    minutes = redis_client.keys("bullpen:hist:bull:img:m:*")
    summaries = redis_client.keys("bullpen:hist:bull:img:ms:*")
    assert minutes and len(summaries) == len(minutes)
    assert all(redis_client.ttl(key) > 24 * 3600 for key in summaries)
    assert all(2 * 3600 < redis_client.ttl(key) <= 3 * 3600 for key in minutes)
    assert span_key(IMG, "m", 0).startswith("bullpen:hist:bull:img:m:")
