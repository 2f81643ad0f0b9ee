"""The history API over what real Node BullMQ workers wrote: the series and per-name JSON of
the contract, its parameter checked, and the oldest waiting job's age."""

from __future__ import annotations

import asyncio
from typing import Any

from django.test import AsyncClient

from queues.history.read import oldest_waiting_ms
from queues.history.recorder import HistoryRecorder
from queues.reads.keys import QueueRef
from tests.history.history_support import feed_events, flush_closed, now_ms
from tests.support.peer import Peer

MAIL = QueueRef("bull", "mail")
PERCENTILES = {"p50", "p95", "p99"}


def run_jobs(peer: Peer) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "6")
    peer("work", "--queue", "mail", "--count", "6", "--delay-ms", "10")
    peer("add-bulk", "--queue", "mail", "--name", "bounce", "--count", "2")
    peer("work", "--queue", "mail", "--count", "2", "--fail")


async def test_series_and_names_answer_the_contract(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await asyncio.to_thread(run_jobs, peer)
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, MAIL)
    await flush_closed(recorder, [])
    # The minutes just written are closed ones, in the range that ends now.
    await asyncio.sleep(0)
    answer = await client.get("/queues/api/queues/mail/history/?range=24h")
    assert answer.status_code == 200
    body = answer.json()
    assert {"queue", "range", "step_s", "points", "totals", "oldest_waiting_ms"} <= set(body)
    assert (body["queue"], body["range"], body["step_s"]) == ("mail", "24h", 60)
    assert len(body["points"]) == 1440
    point = body["points"][-1]
    assert {"t", "completed", "failed", "wait_ms", "run_ms"} <= set(point)
    assert set(point["wait_ms"]) == PERCENTILES == set(point["run_ms"])
    totals = body["totals"]
    assert (totals["completed"], totals["failed"], totals["failure_rate"]) == (6, 2, 0.25)
    assert set(totals["wait_ms"]) == PERCENTILES
    assert totals["run_ms"]["p99"] >= 10
    assert body["oldest_waiting_ms"] is None  # nothing waits

    names = (await client.get("/queues/api/queues/mail/history/names/?range=24h")).json()
    rows = {row["name"]: row for row in names["names"]}
    assert set(rows) == {"send", "bounce"}
    assert (rows["send"]["completed"], rows["send"]["failed"], rows["send"]["failure_rate"]) == (
        6,
        0,
        0.0,
    )
    assert (rows["bounce"]["completed"], rows["bounce"]["failed"]) == (0, 2)
    assert rows["bounce"]["failure_rate"] == 1.0
    assert {"name", "completed", "failed", "failure_rate", "wait_ms", "run_ms", "slowest"} <= set(
        rows["send"]
    )
    slow = rows["send"]["slowest"][0]
    assert set(slow) == {"id", "run_ms"} and slow["run_ms"] >= 10

    for route in ("history", "history/names"):
        bad = await client.get(f"/queues/api/queues/mail/{route}/?range=2w")
        assert bad.status_code == 400 and "range must be one of" in bad.json()["error"]
        assert (await client.get(f"/queues/api/queues/nowhere/{route}/")).status_code == 404


async def test_the_oldest_waiting_jobs_age(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "send", "--count", "3")
    await asyncio.to_thread(
        peer,
        "add",
        "--queue",
        "mail",
        "--name",
        "later",
        "--data",
        "{}",
        "--opts",
        '{"delay": 60000}',
    )
    oldest_id = redis_client.lindex("bull:mail:wait", -1)
    timestamp = int(redis_client.hget(f"bull:mail:{oldest_id}", "timestamp"))
    now = now_ms()
    assert (await oldest_waiting_ms([MAIL, QueueRef("bull", "empty")], now)) == {
        MAIL: now - timestamp,
        QueueRef("bull", "empty"): None,
    }
    before = now_ms()
    body = (await client.get("/queues/api/queues/mail/history/?range=1h")).json()
    after = now_ms()
    assert before - timestamp <= body["oldest_waiting_ms"] <= after - timestamp
