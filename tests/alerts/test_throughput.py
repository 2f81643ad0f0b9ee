"""Throughput per minute: Bullpen's own samples (bounded, and only for the minutes the live
reader counted) and BullMQ's metrics lists."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from queues.cancelling import cancel_and_wait
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.settings import LiveSettings
from queues.reads.keys import QueueRef
from queues.redis.clients import get_client
from queues.redis.connections import default_name
from queues.throughput.coverage import sampled_key
from queues.throughput.rates import series, window_start
from queues.throughput.sampler import KEEP_MINUTES, MINUTE_MS, MinuteSampler, stats_key
from tests.support.live_reads import found_within, publish_nowhere
from tests.support.peer import Peer


async def _count_from(sampler: MinuteSampler, start: int, end: int) -> int:
    """The sampler flushed every 30 s from ``start`` to ``end`` (ms), as a reader that counts
    all along flushes it (one stretch of counting); the minutes it pushed."""
    return sum([await sampler.flush(get_client(), at) for at in [*range(start, end, 30_000), end]])


async def test_samples_are_counted_flushed_and_bounded(peer: Peer, redis_client: Any) -> None:
    peer("add", "--queue", "mail", "--name", "n", "--data", "{}")
    ref = QueueRef("bull", "mail")
    now = int(time.time() * 1000)
    minute = now - now % MINUTE_MS - MINUTE_MS  # the last closed minute
    sampler = MinuteSampler()
    await sampler.flush(get_client(), minute - 1_000)  # counting from before that minute
    for offset in range(3):
        sampler.add(ref, "completed", minute + offset)
    sampler.add(ref, "failed", minute + 10)
    sampler.add(ref, "progress", minute + 20)  # not a finish
    assert await _count_from(sampler, minute - 1_000, now + 5_000) == 1
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


def _fail(peer: Peer, queue: str, count: int, *flags: str) -> None:
    """Node workers without BullMQ's metrics: the chart has only Bullpen's samples."""
    peer("add-bulk", "--queue", queue, "--name", "n", "--count", str(count))
    peer("work", "--queue", queue, "--count", str(count), "--fail", *flags)


async def test_a_reader_just_started_claims_no_quiet_hour(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    """Three jobs fail before any live reader runs; then one starts, as a server does. The
    chart said "0 failed" for the hour beside an alert of 3: now no minute is claimed, and
    the failed set's 3 are shown for the minutes not sampled, as the alert counts them."""
    await asyncio.to_thread(_fail, peer, "mail", 3)
    ref = QueueRef("bull", "mail")
    follower = Follower(publish_nowhere, Interest(), LiveSettings(lease_ttl_ms=1000))
    running = asyncio.ensure_future(follower.run())
    try:
        await found_within(lambda: follower.leader and follower.streams.follows(ref), within=30)
        await found_within(lambda: redis_client.hlen(sampled_key(default_name())) == 1, within=30)
        alerting = {**bullpen_settings, "ALERTS": {"failed_last_hour": 2}}
        with override_settings(BULLPEN=alerting):
            page = (await client.get("/queues/q/mail/?state=failed")).content.decode()
            body = (await client.get("/queues/api/queues/mail/throughput/")).json()
    finally:
        await cancel_and_wait(running)
    assert "3 jobs failed in the last hour, more than 2" in page
    assert "0 failed" not in page
    assert "no minute sampled yet · from bullpen-samples" in page
    assert "In them, 3 jobs failed (from the failed set, as the alert counts)." in page
    assert 'class="unsampled"' in page
    assert body["source"] == "bullpen-samples"
    assert (body["unsampled"], body["sampledFrom"], body["failedUnsampled"]) == (60, None, 3)
    assert {(p["completed"], p["failed"]) for p in body["points"]} == {(None, None)}


async def test_the_totals_count_from_the_first_sampled_minute(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    """Failures twenty minutes ago; a reader that has counted for the last ten. The totals
    say they start then, and the failures before it are the failed set's, as the alert's."""
    await asyncio.to_thread(_fail, peer, "mail", 4, "--clock-behind-ms", "1200000")
    now = int(time.time() * 1000)
    started = now - 10 * MINUTE_MS
    sampler = MinuteSampler()
    await _count_from(sampler, started, now)
    first = started - started % MINUTE_MS + MINUTE_MS  # the first whole minute counted
    body = (await client.get("/queues/api/queues/mail/throughput/")).json()
    assert body["sampledFrom"] == first
    assert (body["completed"], body["failed"], body["failedUnsampled"]) == (0, 0, 4)
    head = [p for p in body["points"] if p["t"] < first]
    assert head[0]["t"] == window_start(now, 60) and {p["failed"] for p in head} == {None}
    counted = [p for p in body["points"] if p["failed"] is not None]
    assert counted[0]["t"] == first and {p["failed"] for p in counted} == {0}
    page = (await client.get("/queues/q/mail/?state=failed")).content.decode()
    clock = time.strftime("%H:%M", time.gmtime(first / 1000))  # the site's zone is UTC
    assert f"since {clock}: 0 completed · 0 failed · failure rate 0% · from bullpen-samples" in page
    assert "In them, 4 jobs failed (from the failed set, as the alert counts)." in page
    assert int(redis_client.zcount("bull:mail:failed", window_start(now, 60), "+inf")) == 4


async def test_a_stretch_of_counting_ends_where_the_reader_stopped(redis_client: Any) -> None:
    """No stretch before the reader follows a stream; a new one after the streams restart or
    a pause in flushing (the time between is unknown); stretches a day old are dropped."""
    key = sampled_key(default_name())
    following = False
    sampler = MinuteSampler(lambda: following)
    t = int(time.time() * 1000) - 2 * 86_400_000
    await sampler.flush(get_client(), t)
    assert not redis_client.exists(key)
    following = True
    await _count_from(sampler, t, t + 60_000)
    sampler.restart()
    await _count_from(sampler, t + 61_000, t + 120_000)
    await sampler.flush(get_client(), t + 190_000)  # 70 s without a flush
    assert redis_client.hgetall(key) == {
        str(t): str(t + 60_000),
        str(t + 61_000): str(t + 120_000),
        str(t + 190_000): str(t + 190_000),
    }
    now = t + 2 * 86_400_000
    sampler.restart()
    await sampler.flush(get_client(), now)
    assert redis_client.hgetall(key) == {str(now): str(now)}
