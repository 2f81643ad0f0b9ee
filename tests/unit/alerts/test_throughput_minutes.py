"""BullMQ's metrics read minute by minute: the open minute from the hash, the list before it."""

from __future__ import annotations

import pytest

from queues.throughput.rates import bullmq_minutes, window_start
from queues.throughput.sampler import MINUTE_MS

pytestmark = pytest.mark.unit

T = 1_700_000_000_000 - 1_700_000_000_000 % MINUTE_MS  # a minute's start


def test_the_open_minute_is_the_minute_of_prev_ts_and_the_list_ends_before_it() -> None:
    meta = [str(T + 12_345), "17", "10"]  # prevTS, count, prevCount
    assert bullmq_minutes(meta, ["4", "0", "6"]) == {
        T: 7,
        T - MINUTE_MS: 4,
        T - 2 * MINUTE_MS: 0,
        T - 3 * MINUTE_MS: 6,
    }


def test_nothing_recorded_reads_as_nothing() -> None:
    assert bullmq_minutes([None, None, None], []) == {}
    assert bullmq_minutes(None, ["3"]) == {}
    assert bullmq_minutes(["x", "y", "z"], ["3"]) == {}


def test_the_window_is_whole_minutes_ending_with_the_current_one() -> None:
    assert window_start(T + 59_999, 60) == T - 59 * MINUTE_MS
    assert window_start(T, 1) == T
