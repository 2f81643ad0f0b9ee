"""The failure trend's arithmetic: minutes of the last day, quarter-hour points, new or not."""

from __future__ import annotations

from queues.failures.trends import BUCKET_MINUTES, DAY_MINUTES, Trend, minutes_of, parse_trend

NOW_MINUTE = 29_000_000


def test_only_the_last_day_is_counted_per_minute() -> None:
    now_ms = NOW_MINUTE * 60_000
    times = [now_ms, now_ms + 59_999, now_ms - 1, now_ms - DAY_MINUTES * 60_000]
    assert minutes_of(times, NOW_MINUTE) == {NOW_MINUTE: 2, NOW_MINUTE - 1: 1}


def test_points_are_quarter_hours_oldest_first() -> None:
    trend = Trend(
        {NOW_MINUTE: 4, NOW_MINUTE - BUCKET_MINUTES: 1, NOW_MINUTE - 2000: 9}, 0, NOW_MINUTE
    )
    points = trend.buckets()
    assert len(points) == DAY_MINUTES // BUCKET_MINUTES
    assert points[-1] == 4 and points[-2] == 1 and sum(points) == 5
    assert trend.total == 14  # what Redis holds; the points leave out what is past a day


def test_new_means_first_seen_within_the_hour() -> None:
    assert Trend({}, (NOW_MINUTE - 59) * 60_000, NOW_MINUTE).is_new()
    assert not Trend({}, (NOW_MINUTE - 61) * 60_000, NOW_MINUTE).is_new()


def test_parse_keeps_the_day_and_ignores_the_bookkeeping() -> None:
    flat = [
        "since",
        "123",
        "upto",
        "456",
        f"m{NOW_MINUTE}",
        "3",
        f"m{NOW_MINUTE - DAY_MINUTES}",
        "7",
    ]
    trend = parse_trend(flat, NOW_MINUTE)
    assert trend.per_minute == {NOW_MINUTE: 3} and trend.since_ms == 123
