"""What the alert rules keep of each queue's minutes, and how much (pure logic; the reads are
in tests/alerts/test_alert_minutes.py)."""

from __future__ import annotations

import pytest

from queues.alerts.minutes import KeptMinutes, _record_bytes, usable
from queues.history.packed import PackedRecord, loads_total
from queues.history.record import NameRecord, dumps_span
from queues.history.storage import MINUTE_MS
from queues.reads.keys import QueueRef

pytestmark = pytest.mark.unit

START = 28_333_333 * MINUTE_MS


def record(failed: int, stalled: int = 0) -> PackedRecord:
    found = NameRecord(failed=failed, stalled=stalled)
    for run in range(failed):
        found.run.add(10.0 + 7 * run)
    return loads_total(dumps_span({"send": found}))


def test_only_windows_whose_minutes_outlive_them_are_kept() -> None:
    assert usable(900) and usable(2 * 3600)
    assert not usable(3 * 3600) and not usable(86_400)


def test_a_queue_whose_last_minute_moves_back_keeps_nothing_and_old_minutes_go() -> None:
    kept = KeptMinutes()
    ref = QueueRef("bull", "img")
    queue = kept._queue(ref, START, oldest=START - 10 * MINUTE_MS)
    queue.keep_records({("m", START - 5 * MINUTE_MS): record(3, stalled=2)})
    queue.stalls[START - 9 * MINUTE_MS] = 4
    assert queue.stalled([START - 9 * MINUTE_MS, START - 5 * MINUTE_MS, START]) == (6, [START])
    # A later ``...:last``: kept; minutes older than the oldest asked dropped.
    again = kept._queue(ref, START + MINUTE_MS, oldest=START - 6 * MINUTE_MS)
    assert again is queue and list(again.records) == [START - 5 * MINUTE_MS] and not again.stalls
    # An earlier one: nothing kept.
    assert not kept._queue(ref, START, oldest=START - 6 * MINUTE_MS).records


def test_queues_past_the_limit_keep_nothing_and_those_kept_stay() -> None:
    one = record(400)
    size = _record_bytes(one)
    kept = KeptMinutes(limit=3 * size)
    refs = [QueueRef("bull", f"q{i}") for i in range(5)]
    for ref in refs:
        kept._queue(ref, START, oldest=START).keep_records({("m", START): one})
    kept._recount(list(refs))
    assert len(kept) == 3 and kept.used == 3 * size
    assert set(kept._queues) == set(refs[:3])
    # The next pass: the same three stay, the other two are again not kept.
    for ref in refs[3:]:
        kept._queue(ref, START, oldest=START).keep_records({("m", START): one})
    kept._recount(refs[3:])
    assert set(kept._queues) == set(refs[:3])
