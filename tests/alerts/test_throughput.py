"""Throughput per minute: Bullpen's own samples (bounded) and BullMQ's metrics lists."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest
from django.test import AsyncClient

from queues.reads.keys import QueueRef
from queues.redis.clients import get_client
from queues.throughput.rates import series
from queues.throughput.sampler import KEEP_MINUTES, MINUTE_MS, MinuteSampler, stats_key
from tests.support.peer import Peer


async def test_samples_are_counted_flushed_and_bounded(peer: Peer, redis_client: Any) -> None:
    peer("add", "--queue", "mail", "--name", "n", "--data", "{}")
    ref = QueueRef("bull", "mail")
    now = int(time.time() * 1000)
    minute = now - now % MINUTE_MS - MINUTE_MS  # the last closed minute
    sampler = MinuteSampler()
    for offset in range(3):
        sampler.add(ref, "completed", minute + offset)
    sampler.add(ref, "failed", minute + 10)
    sampler.add(ref, "progress", minute + 20)  # not a finish
    assert await sampler.flush(get_client(), now + 5_000) == 1
    body = await series(ref, "hour")
    assert body["source"] == "bullpen-samples"
    point = next(p for p in body["points"] if p["t"] == minute)
    assert (point["completed"], point["failed"]) == (3, 1)
    assert body["failureRate"] == 0.25
    # A day of minutes at most, whatever the traffic.
    for extra in range(KEEP_MINUTES + 20):
        sampler.add(ref, "completed", minute - (extra + 1) * MINUTE_MS)
    await sampler.flush(get_client(), now + 5_000)
    assert redis_client.llen(stats_key(ref)) == KEEP_MINUTES


def _minutes(redis_client: Any, queue: str, state: str) -> Counter[int]:
    """Jobs per minute as the finished set holds them (scored by finishedOn)."""
    scores = redis_client.zrange(f"bull:{queue}:{state}", 0, -1, withscores=True)
    return Counter(int(score) - int(score) % MINUTE_MS for _, score in scores)


def _work(peer: Peer, queue: str, count: int, *flags: str) -> None:
    peer("add-bulk", "--queue", queue, "--name", "n", "--count", str(count))
    peer("work", "--queue", queue, "--count", str(count), "--metrics", "1440", *flags)


async def test_failures_of_the_open_minute_count(client: AsyncClient, peer: Peer) -> None:
    """BullMQ closes a minute only when a later job of its kind finishes: the five failures of
    the current minute are in its metrics hash, not yet in its list."""
    await asyncio.to_thread(_work, peer, "img", 5, "--fail", "--concurrency", "5")
    body = (await client.get("/queues/api/queues/img/throughput/?window=hour")).json()
    assert body["source"] == "bullmq-metrics"
    assert (body["completed"], body["failed"], body["failureRate"]) == (0, 5, 1.0)
    page = (await client.get("/queues/q/img/throughput/?window=hour")).content.decode()
    assert "0 completed · 5 failed · failure rate 100%" in page


async def test_each_metrics_list_is_placed_by_its_own_clock(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    """Real Node workers, their clocks behind to finish jobs in earlier minutes: failures ten
    and five minutes ago, completions two minutes ago and now. Every minute of the series holds
    what the finished sets hold for it, in the hour's and the day's window."""
    for count, behind, fail in ((2, 600_000, True), (3, 300_000, True), (4, 120_000, False)):
        flags = ["--clock-behind-ms", str(behind), *(["--fail"] if fail else [])]
        await asyncio.to_thread(_work, peer, "img", count, *flags)
    await asyncio.to_thread(_work, peer, "img", 1)
    completed = _minutes(redis_client, "img", "completed")
    failed = _minutes(redis_client, "img", "failed")
    assert sum(failed.values()) == 5 and sum(completed.values()) == 5
    for window in ("hour", "day"):
        body = (await client.get(f"/queues/api/queues/img/throughput/?window={window}")).json()
        assert body["source"] == "bullmq-metrics"
        assert {p["t"]: p["completed"] for p in body["points"] if p["completed"]} == completed
        assert {p["t"]: p["failed"] for p in body["points"] if p["failed"]} == failed
        assert (body["completed"], body["failed"], body["failureRate"]) == (5, 5, 0.5)
    assert (await client.get("/queues/api/queues/img/throughput/?window=week")).status_code == 400
    page = (await client.get("/queues/q/img/throughput/?window=hour")).content.decode()
    assert "<svg" in page and "5 completed · 5 failed · failure rate 50%" in page


@pytest.mark.parametrize("window", ["hour", "day"])
async def test_empty_queue_series(client: AsyncClient, peer: Peer, window: str) -> None:
    peer("add", "--queue", "quiet", "--name", "n", "--data", "{}")
    body = (await client.get(f"/queues/api/queues/quiet/throughput/?window={window}")).json()
    assert len(body["points"]) == {"hour": 60, "day": 1440}[window]
    assert body["completed"] == 0 and body["failureRate"] == 0.0
