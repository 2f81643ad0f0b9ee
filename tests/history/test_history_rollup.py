"""Hours and days rolled up from minutes exactly, once, and a roll-up lost (a Redis restart
in the middle) made up from the finer spans."""

from __future__ import annotations

import asyncio
from typing import Any

from queues.history.read import read_history, read_names
from queues.history.record import loads_span, merged
from queues.history.recorder import HistoryRecorder
from queues.history.storage import DAY_MS, HOUR_MS, span_key
from queues.reads.keys import QueueRef
from queues.redis.clients import get_client
from tests.history.history_support import feed_events, flush_closed, now_ms
from tests.support.peer import Peer

IMG = QueueRef("bull", "img")


async def test_hours_and_days_roll_up_exactly_once(peer: Peer, redis_client: Any) -> None:
    def run_jobs() -> None:
        for name, count in (("resize", 12), ("thumb", 6)):
            peer("add-bulk", "--queue", "img", "--name", name, "--count", str(count))
        peer("work", "--queue", "img", "--count", "18", "--delay-ms", "10", "--concurrency", "3")

    await asyncio.to_thread(run_jobs)
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, IMG)
    await flush_closed(recorder, [])
    minutes = {
        int(key.rsplit(":", 1)[1]): loads_span(redis_client.get(key))
        for key in redis_client.keys("bullpen:hist:bull:img:m:*")
    }
    hour = min(minutes) - min(minutes) % HOUR_MS
    day = hour - hour % DAY_MS
    # The hours roll up as they close, from their minutes (kept only until then); the day
    # when it closes, from its hours.
    soon = max(minutes) - max(minutes) % HOUR_MS + HOUR_MS + 180_000
    later = max(day + DAY_MS + 180_000, soon)
    before = await read_history(IMG, "90d", soon)
    written = await recorder.rollups.run(get_client(), soon, force=True)
    written += await recorder.rollups.run(get_client(), later, force=True)
    assert written >= 2
    # Again, as a reader that starts again would: each span is written once.
    assert await recorder.rollups.run(get_client(), later, force=True) == 0
    hours = redis_client.keys("bullpen:hist:bull:img:h:*")
    assert span_key(IMG, "h", hour) in hours and redis_client.exists(span_key(IMG, "d", day))
    rolled = loads_span(redis_client.get(span_key(IMG, "d", day)))
    assert rolled == merged(list(minutes.values()))
    after = await read_history(IMG, "90d", later)
    assert after.totals == before.totals and after.totals.completed == 18
    names = {row.name: row.completed for row in (await read_names(IMG, "30d", later)).names}
    assert names == {"resize": 12, "thumb": 6}
    # A day lost (Redis restarted before it was saved) reads the same, from its hours.
    redis_client.delete(span_key(IMG, "d", day))
    assert (await read_history(IMG, "90d", later)).totals == before.totals
    assert now_ms() < later
