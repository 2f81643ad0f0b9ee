"""Throughput per minute: Bullpen's own samples (bounded) and BullMQ's metrics lists."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import AsyncClient

from queues.connection import get_client
from queues.keys import QueueRef
from queues.sampler import KEEP_MINUTES, MINUTE_MS, MinuteSampler, stats_key
from queues.throughput import series
from tests.conftest import Peer


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


async def test_bullmq_metrics_lists_win(client: AsyncClient, peer: Peer, redis_client: Any) -> None:
    peer("add", "--queue", "img", "--name", "n", "--data", "{}")
    now = int(time.time() * 1000)
    last_closed = now - now % MINUTE_MS - MINUTE_MS
    # The shape BullMQ workers write with the metrics option: a count per minute, newest first.
    redis_client.hset("bull:img:metrics:completed", mapping={"prevTS": last_closed, "count": 0})
    redis_client.rpush("bull:img:metrics:completed:data", 7, 5)
    redis_client.rpush("bull:img:metrics:failed:data", 1, 0)
    body = (await client.get("/queues/api/queues/img/throughput/?window=hour")).json()
    assert body["source"] == "bullmq-metrics"
    by_minute = {p["t"]: p for p in body["points"]}
    assert by_minute[last_closed]["completed"] == 7 and by_minute[last_closed]["failed"] == 1
    assert by_minute[last_closed - MINUTE_MS]["completed"] == 5
    assert len(body["points"]) == 60
    assert (await client.get("/queues/api/queues/img/throughput/?window=week")).status_code == 400
    page = (await client.get("/queues/q/img/throughput/?window=hour")).content.decode()
    assert "<svg" in page and "12 completed" in page


@pytest.mark.parametrize("window", ["hour", "day"])
async def test_empty_queue_series(client: AsyncClient, peer: Peer, window: str) -> None:
    peer("add", "--queue", "quiet", "--name", "n", "--data", "{}")
    body = (await client.get(f"/queues/api/queues/quiet/throughput/?window={window}")).json()
    assert len(body["points"]) == {"hour": 60, "day": 1440}[window]
    assert body["completed"] == 0 and body["failureRate"] == 0.0
