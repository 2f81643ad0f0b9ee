"""A range's totals read each rolled-up hour's and day's queue record stored alone (not the
span of every name's sketches), and spans rolled up before those records existed still read
as they were stored; counts and percentiles the same either way."""

from __future__ import annotations

import asyncio
from typing import Any

from queues.history import packed, summary
from queues.history.packed import loads_total
from queues.history.read import read_history, read_names, read_totals
from queues.history.record import NameRecord, dumps_span
from queues.history.recorder import HistoryRecorder
from queues.history.storage import DAY_MS, HOUR_MS, span_key, total_key
from queues.reads.keys import QueueRef
from queues.redis.clients import get_client
from tests.history.history_support import feed_events, flush_closed
from tests.support.peer import Peer

IMG = QueueRef("bull", "img")


async def test_totals_read_the_records_alone_and_spans_stored_before(
    peer: Peer, redis_client: Any
) -> None:
    def run_jobs() -> None:
        for name, count in (("resize", 12), ("thumb", 6)):
            peer("add-bulk", "--queue", "img", "--name", name, "--count", str(count))
        peer("work", "--queue", "img", "--count", "18", "--delay-ms", "10", "--concurrency", "3")
        peer("add-bulk", "--queue", "img", "--name", "thumb", "--count", "2")
        peer("work", "--queue", "img", "--count", "2", "--fail")

    await asyncio.to_thread(run_jobs)
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, IMG)
    await flush_closed(recorder, [])
    starts = [int(key.rsplit(":", 1)[1]) for key in redis_client.keys("bullpen:hist:bull:img:m:*")]
    hours = sorted({start - start % HOUR_MS for start in starts})
    day = hours[0] - hours[0] % DAY_MS
    soon = hours[-1] + HOUR_MS + 180_000
    later = max(day + DAY_MS + 180_000, soon)
    before = await read_history(IMG, "90d", soon)
    await recorder.rollups.run(get_client(), soon, force=True)
    await recorder.rollups.run(get_client(), later, force=True)
    # Each hour and the day: the queue's record alone beside the span, the same record.
    for tier, start in [*(("h", hour) for hour in hours), ("d", day)]:
        alone = redis_client.get(total_key(IMG, tier, start))
        whole = redis_client.get(span_key(IMG, tier, start))
        assert alone and whole and len(alone) < len(whole)
        assert loads_total(alone) == loads_total(whole)
    expected = (await read_history(IMG, "90d", later)).totals
    assert expected == before.totals and expected.completed == 18 and expected.failed == 2
    names = {
        row.name: (row.completed, row.failed) for row in (await read_names(IMG, "90d", later)).names
    }
    assert names == {"resize": (12, 0), "thumb": (6, 2)}

    # The day's span read by no total: made to say otherwise, the totals still read the record.
    stored_day = redis_client.get(span_key(IMG, "d", day))
    told = NameRecord(completed=999)
    told.run.add(1.0)
    redis_client.set(span_key(IMG, "d", day), dumps_span({"other": told}))
    packed.forget()
    summary.forget()
    assert (await read_history(IMG, "90d", later)).totals == expected
    assert (await read_totals([IMG], "90d", later))[IMG] == expected

    # Stored before records were kept alone: no record, and no hour left to make the day
    # from; the day's span as the roll-up wrote it reads the same totals.
    redis_client.delete(*redis_client.keys("bullpen:hist:bull:img:[hd]q:*"))
    redis_client.delete(*redis_client.keys("bullpen:hist:bull:img:h:*"))
    redis_client.set(span_key(IMG, "d", day), stored_day)
    packed.forget()
    assert (await read_history(IMG, "90d", later)).totals == expected
    assert (await read_totals([IMG], "90d", later))[IMG] == expected
