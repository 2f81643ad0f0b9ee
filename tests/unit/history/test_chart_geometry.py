"""The history charts' geometry: round ticks, scaling, units, gaps and the edge cases a
queue's history has (nothing recorded, one point, values far beyond the usual)."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from dashboard.history.charts import (
    LEFT,
    MAX_LINE_COLUMNS,
    PLOT_H,
    PLOT_W,
    TOP,
    WIDTH,
    Axis,
    history_charts,
)
from dashboard.history.scales import (
    count_scale,
    duration_scale,
    duration_text,
    nice_ticks,
    percent_scale,
    percent_text,
)
from queues.history.model import HistoryPoint, HistorySeries, HistoryTotals, Percentiles

NOW = 1_764_633_600_000 + 30 * 60_000 + 12_345  # 2025-12-02 00:30:12.345 UTC
MINUTE = 60_000


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


def series(points: list[HistoryPoint], range_name: str = "1h", step_s: int = 60) -> HistorySeries:
    return HistorySeries("mail", range_name, step_s, points, HistoryTotals())


def minute(i: int, **values) -> HistoryPoint:
    """The point ``i`` minutes before the newest step of NOW."""
    return HistoryPoint(t=(NOW // MINUTE - i) * MINUTE, **values)


def coords(points: str) -> list[tuple[float, float]]:
    return [tuple(map(float, pair.split(","))) for pair in points.split()]


def test_nice_ticks_are_round_and_reach_the_peak():
    assert nice_ticks(7, whole=True) == [0, 2, 4, 6, 8]
    assert nice_ticks(100) == [0, 25, 50, 75, 100]
    assert nice_ticks(0.37) == [0, 0.1, 0.2, 0.3, 0.4]
    assert nice_ticks(1) == [0, 0.25, 0.5, 0.75, 1]
    assert nice_ticks(3, whole=True) == [0, 1, 2, 3]


def test_an_axis_with_nothing_runs_from_zero_to_one():
    assert nice_ticks(0) == [0, 1]
    assert nice_ticks(-5) == [0, 1]
    assert nice_ticks(float("nan")) == [0, 1]
    assert count_scale(0).labels == ["0", "1"]


def test_huge_counts_have_compact_labels_and_few_ticks():
    scale = count_scale(7_300_000_000)
    assert len(scale.ticks) <= 6 and scale.top >= 7_300_000_000
    assert scale.labels[-1] == "8G"
    assert count_scale(12_000).labels == ["0", "5k", "10k", "15k"]


def test_durations_pick_one_readable_unit_per_axis():
    assert duration_scale(850).labels == ["0 s", "0.25 s", "0.50 s", "0.75 s", "1 s"]
    assert duration_scale(380).labels == ["0 ms", "100 ms", "200 ms", "300 ms", "400 ms"]
    assert duration_scale(4_200).labels == ["0 s", "2 s", "4 s", "6 s"]
    assert duration_scale(3 * 60_000).labels[-1] == "3 min"
    assert duration_scale(5 * 3_600_000).labels[-1].endswith(" h")
    assert duration_scale(400 * 86_400_000).labels[-1].endswith(" d")
    # The ticks stay milliseconds whatever the unit written.
    assert duration_scale(4_200).ticks[1] == 2000


def test_one_duration_as_read():
    assert duration_text(850) == "850 ms"
    assert duration_text(1234) == "1.2 s"
    assert duration_text(210_000) == "3.5 min"
    assert duration_text(7_560_000) == "2.1 h"
    assert duration_text(None) == ""
    with translation.override("de"):
        assert duration_text(1234) == "1,2 s"


def test_failure_rates():
    assert percent_text(0.25) == "25 %"
    assert percent_text(0.125) == "12.5 %"
    assert percent_text(0) == "0 %"
    assert percent_text(0.0004) == "0.04 %"
    assert percent_text(None) == ""
    assert percent_scale(0.3).labels == ["0 %", "10 %", "20 %", "30 %"]
    assert percent_scale(5).top == 1.0  # a rate is never above 100 %


def test_points_scale_into_the_plot_and_the_newest_step_is_the_right_edge():
    points = [minute(59, completed=0), minute(30, completed=4), minute(0, completed=8)]
    jobs = history_charts(series(points), NOW)[0]
    done = jobs.lines[0]
    assert len(done.segments) == 3  # not adjacent steps: three dots, never a slope
    (x0, y0), (_, y1), (x2, y2) = (coords(s.points)[0] for s in done.segments)
    assert x0 == LEFT and x2 == LEFT + PLOT_W
    assert y0 == TOP + PLOT_H and y2 == TOP  # 8 is the top tick
    assert y1 == pytest.approx(TOP + PLOT_H / 2)
    assert all(s.single for s in done.segments)


def test_a_missing_step_or_percentile_is_a_gap():
    wait = Percentiles(p50=10, p95=20, p99=30)
    points = [
        minute(5, completed=1, wait_ms=wait),
        minute(4, completed=1, wait_ms=wait),
        # minute 3 has no record
        minute(2, completed=1, wait_ms=Percentiles()),
        minute(1, completed=1, wait_ms=wait),
        minute(0, completed=1, wait_ms=wait),
    ]
    jobs, rate, wait_chart, run_chart = history_charts(series(points), NOW)
    assert [len(coords(s.points)) for s in jobs.lines[0].segments] == [2, 3]
    assert [len(coords(s.points)) for s in wait_chart.lines[1].segments] == [2, 2]
    assert [len(coords(s.points)) for s in rate.lines[0].segments] == [2, 3]
    assert run_chart.empty and not run_chart.lines[0].segments


def test_an_empty_series_has_axes_and_says_so():
    charts = history_charts(series([]), NOW)
    assert [c.key for c in charts] == ["jobs", "rate", "wait_ms", "run_ms"]
    for chart in charts:
        assert chart.empty and not chart.hovers
        assert len(chart.y_ticks) == 2 and chart.x_ticks
    assert charts[0].summary == "Jobs per minute: 0 completed, 0 failed in all"


def test_a_single_point_is_a_dot_with_its_hover_text():
    point = minute(0, completed=3, failed=1, run_ms=Percentiles(p50=1200, p95=1500, p99=1900))
    jobs, rate, _, run = history_charts(series([point]), NOW)
    assert jobs.lines[0].segments[0].single
    assert jobs.hovers[0].title == "00:30: 3 completed, 1 failed"
    assert rate.hovers[0].title == "00:30: failure rate 25 % (1 of 4)"
    assert run.hovers[0].title == "00:30: p50 1.2 s, p95 1.5 s, p99 1.9 s"
    assert LEFT <= jobs.hovers[0].x and jobs.hovers[0].x + jobs.hovers[0].width <= LEFT + PLOT_W


def test_a_day_by_the_minute_hovers_in_columns_with_sums():
    points = [minute(i, completed=1, failed=i % 2) for i in range(1440)]
    jobs = history_charts(series(points, "24h"), NOW)[0]
    assert len(jobs.hovers) <= 240
    assert sum(int(re.match(r".*: (\d+) completed", h.title).group(1)) for h in jobs.hovers) == 1440
    assert "\u2013" in jobs.hovers[0].title  # a span of minutes
    assert len(jobs.lines[0].segments) == 1  # every minute recorded: one line


def test_huge_values_stay_inside_the_plot():
    points = [
        minute(1, completed=10**12, run_ms=Percentiles(p50=1, p95=1e10, p99=1e13)),
        minute(0, completed=0, run_ms=Percentiles(p50=0, p95=0, p99=0)),
    ]
    for chart in history_charts(series(points), NOW):
        for line in chart.lines:
            for segment in line.segments:
                for x, y in coords(segment.points):
                    assert LEFT <= x <= WIDTH and TOP <= y <= TOP + PLOT_H


def test_time_ticks_are_round_times_within_the_range():
    week = HistorySeries("mail", "7d", 3600, [], HistoryTotals())
    charts = history_charts(week, NOW)
    labels = [t.label for t in charts[0].x_ticks]
    assert 4 <= len(labels) <= 7 and all(re.fullmatch(r"\d+ \w+", label) for label in labels)
    hour = [t.label for t in history_charts(series([]), NOW)[0].x_ticks]
    assert hour == ["23:40", "23:50", "00:00", "00:10", "00:20", "00:30"]
    axis = Axis.of(week, NOW)
    assert axis.steps == 168 and axis.end == NOW // 3_600_000 * 3_600_000


def test_a_day_by_the_minute_is_drawn_in_columns_that_keep_every_peak_and_gap():
    # A day of minutes, one busy minute in every 37, and an hour with nothing recorded.
    points = [
        minute(i, completed=500 if i % 37 == 0 else 1) for i in range(1440) if not 600 <= i < 660
    ]
    jobs = history_charts(series(points, "24h"), NOW)[0]
    (done, _failed) = jobs.lines
    drawn = [xy for segment in done.segments for xy in coords(segment.points)]
    assert len(drawn) <= 2 * MAX_LINE_COLUMNS + 2 < len(points)
    # Every busy minute's peak is still drawn, as high as the others.
    top = min(y for _x, y in drawn)
    peaks = [x for x, y in drawn if y == top]
    assert len(peaks) == sum(1 for p in points if p.completed == 500)
    # The hour without a record is a gap: two lines, not a slope across it.
    assert len(done.segments) == 2


def test_an_hour_by_the_minute_draws_every_step():
    points = [minute(i, completed=i) for i in range(60)]
    jobs = history_charts(series(points), NOW)[0]
    assert len(coords(jobs.lines[0].segments[0].points)) == 60
