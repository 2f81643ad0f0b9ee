"""Totals of many queues read at once (the overview's p95 wait column) are exactly those a
queue's own series gives, on history recorded from real Node BullMQ workers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from queues.history import spans
from queues.history.read import read_history, read_totals
from queues.history.recorder import HistoryRecorder
from queues.history.storage import DAY_MS, HOUR_MS
from queues.reads.keys import QueueRef
from queues.redis.clients import get_client
from tests.history.history_support import AHEAD_MS, feed_events, flush_closed, now_ms
from tests.support.peer import Peer

IMG = QueueRef("bull", "img")
MAIL = QueueRef("bull", "mail")
QUIET = QueueRef("bull", "quiet")


def run_jobs(peer: Peer, queue: str, count: int, *flags: str) -> None:
    peer("add-bulk", "--queue", queue, "--name", "job", "--count", str(count))
    peer("work", "--queue", queue, "--count", str(count), *flags)


async def test_totals_of_many_queues_equal_each_queues_series(
    peer: Peer, redis_client: Any
) -> None:
    await asyncio.to_thread(run_jobs, peer, "img", 30, "--delay-ms", "20", "--concurrency", "2")
    await asyncio.to_thread(run_jobs, peer, "img", 4, "--fail")
    await asyncio.to_thread(run_jobs, peer, "mail", 12, "--delay-ms", "5")
    recorder = HistoryRecorder()
    for ref in (IMG, MAIL):
        feed_events(recorder, redis_client, ref)
    # Some minutes written (their summaries and sketches), the open ones made from the reader's
    # notes only once flushed: read both before and after every minute is closed.
    await flush_closed(recorder, [])
    for at in (now_ms(), now_ms() + AHEAD_MS):
        for range_name in ("1h", "24h", "7d", "90d"):
            found = await read_totals([IMG, MAIL, QUIET], range_name, at)
            for ref in (IMG, MAIL, QUIET):
                assert found[ref] == (await read_history(ref, range_name, at)).totals
    # Hours and days rolled up: stored spans and summaries of every tier read the same.
    minute = now_ms()
    soon = minute - minute % HOUR_MS + HOUR_MS + 180_000
    later = max(minute - minute % DAY_MS + DAY_MS + 180_000, soon)
    written = await recorder.rollups.run(get_client(), soon, force=True)
    assert written + await recorder.rollups.run(get_client(), later, force=True) >= 4
    for range_name in ("24h", "7d", "30d", "90d"):
        found = await read_totals([IMG, MAIL, QUIET], range_name, later)
        for ref in (IMG, MAIL, QUIET):
            assert found[ref] == (await read_history(ref, range_name, later)).totals
    assert found[IMG].completed == 30 and found[QUIET].completed == 0
    totals = await read_totals([IMG, MAIL], "1h", now_ms() + AHEAD_MS)
    assert (totals[IMG].completed, totals[IMG].failed) == (30, 4)
    assert (totals[MAIL].completed, totals[MAIL].failed) == (12, 0)
    assert totals[IMG].wait_ms.p95 is not None and totals[MAIL].run_ms.p50 is not None


async def test_several_queues_keys_in_one_mget_split_back_per_queue(
    redis_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    refs = [QueueRef("bull", f"q{index}") for index in range(7)]
    keys = [[f"bench:{ref.name}:{n}" for n in range(index % 4)] for index, ref in enumerate(refs)]
    for wanted in keys:
        for key in wanted[::2]:
            redis_client.set(key, key.upper())
    expected = [[key.upper() if n % 2 == 0 else None for n, key in enumerate(k)] for k in keys]
    for limit in (1, 3, 2000):  # one queue's keys are never split, however many
        monkeypatch.setattr(spans, "MGET_KEYS", limit)
        found = await spans.mget_each(refs, keys)
        assert found == expected
