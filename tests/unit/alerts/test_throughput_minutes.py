"""BullMQ's metrics read minute by minute: the open minute from the hash, the list before it;
Bullpen's samples only for the minutes the live reader counted, the others unknown."""

from __future__ import annotations

import json
import re

import pytest

from dashboard.templatetags.bullpen_figures import spark
from queues.reads.keys import QueueRef
from queues.throughput.coverage import counted, stretches
from queues.throughput.rates import _series, bullmq_minutes, window_start
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


def test_a_minute_counts_as_sampled_only_inside_a_stretch_that_pushed_it() -> None:
    spans = stretches({str(T + 30_000): str(T + 3 * MINUTE_MS + 2_000)})
    assert spans == [(T + 30_000, T + 3 * MINUTE_MS + 2_000)]
    # The minute the reader started in missed its first seconds; the last one is pushed
    # only once its grace is over.
    assert not counted(T, spans)
    assert counted(T + MINUTE_MS, spans) and counted(T + 2 * MINUTE_MS, spans)
    assert not counted(T + 3 * MINUTE_MS, spans)
    assert not counted(T + MINUTE_MS, [])
    assert stretches([str(T), str(T + 1), "x", "y"]) == [(T, T + 1)]
    assert stretches(None) == []


def _samples(minutes: dict[int, tuple[int, int]]) -> list[str]:
    return [json.dumps([m, done, broke]) for m, (done, broke) in minutes.items()]


def test_minutes_before_the_first_sample_are_unknown_not_zero() -> None:
    now = T + 30_000
    first = window_start(now, 60)
    started = T - 10 * MINUTE_MS - 5_000  # the reader started ten minutes ago
    covered = {str(started): str(now)}
    samples = _samples({T - 5 * MINUTE_MS: (4, 1), T - 30 * MINUTE_MS: (9, 9)})
    body = _series(QueueRef("bull", "mail"), "hour", 60, now, ({}, {}), (samples, covered))
    known = [p for p in body["points"] if p["completed"] is not None]
    assert [p["t"] for p in known] == [T - m * MINUTE_MS for m in range(10, 0, -1)]
    assert body["points"][0] == {"t": first, "completed": None, "failed": None}
    # A sample of a minute no stretch covers is not counted: it cannot be told from a gap.
    assert (body["completed"], body["failed"], body["failureRate"]) == (4, 1, 0.2)
    assert (body["unsampled"], body["sampledFrom"]) == (50, T - 10 * MINUTE_MS)


def test_bullmq_metrics_cover_every_minute() -> None:
    failed = {T: 2}
    body = _series(QueueRef("bull", "mail"), "hour", 60, T + 1, ({}, failed), (None, None))
    assert body["source"] == "bullmq-metrics"
    assert (body["unsampled"], body["sampledFrom"], body["failed"]) == (0, None, 2)
    assert all(p["completed"] is not None for p in body["points"])


def test_nothing_sampled_is_all_unknown() -> None:
    body = _series(QueueRef("bull", "mail"), "hour", 60, T, ({}, {}), (None, None))
    assert body["unsampled"] == 60 and body["sampledFrom"] is None
    assert (body["completed"], body["failed"], body["failureRate"]) == (0, 0, 0.0)


def test_the_sparkline_shades_gaps_and_draws_no_line_through_them() -> None:
    unknown = {"completed": None, "failed": None}
    points = [unknown] * 30 + [{"completed": 2, "failed": 1}] * 29 + [unknown]
    svg = str(spark(points, 590, 20))
    shaded = re.findall(r'<rect class="unsampled" x="([\d.]+)" width="([\d.]+)"', svg)
    assert shaded == [("0.0", "295.0"), ("585.0", "5.0")]
    done = re.search(r'<path class="done"[^>]* d="([^"]*)"', svg)
    assert done is not None and done.group(1) == "M300.0,1.0L580.0,1.0"
    assert "not sampled" in svg
    full = str(spark([{"completed": 0, "failed": 0}] * 60, 590, 20))
    assert "unsampled" not in full and 'd="M0.0,19.0L590.0,19.0"' in full
    # Only the queue page's chart is stretched to its box; the overview's stay as drawn.
    assert "preserveAspectRatio" not in full
    assert 'preserveAspectRatio="none"' in str(spark(points, 590, 20, stretch=True))
