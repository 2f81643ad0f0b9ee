"""Durations as typed into the Clean form: pure parsing, no Redis."""

from __future__ import annotations

import pytest

from dashboard.forms.durations import DurationError, parse_duration_ms


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("1 h", 3_600_000),
        ("30 min", 1_800_000),
        ("7 d", 604_800_000),
        ("90 s", 90_000),
        ("1h30m", 5_400_000),
        ("1h 30min", 5_400_000),
        ("500 ms", 500),
        ("2 w", 1_209_600_000),
        ("1.5 h", 5_400_000),
        ("  3 Hours ", 10_800_000),
        ("1 day 2 hours", 93_600_000),
        ("0 s", 0),
        # A plain number is milliseconds, as grace_ms always was.
        ("3600000", 3_600_000),
        ("0", 0),
    ],
)
def test_accepted(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "abc",
        "1 fortnight",
        "-5 min",
        "1h 30",
        "h",
        "1,5 h",
        "30 min ago",
        "\uff11 h",  # a full-width digit
        "1e3",
    ],
)
def test_refused_with_the_accepted_units(text: str) -> None:
    with pytest.raises(DurationError) as raised:
        parse_duration_ms(text)
    assert "units: ms, s, min, h, d, w" in str(raised.value)


def test_unknown_unit_is_named() -> None:
    with pytest.raises(DurationError, match="unknown unit 'fortnight'"):
        parse_duration_ms("1 fortnight")


def test_absurd_lengths_are_refused() -> None:
    with pytest.raises(DurationError, match="longer than 10 years"):
        parse_duration_ms("99999999999999999999999 d")
    with pytest.raises(DurationError, match="longer than 10 years"):
        parse_duration_ms("9" * 40)
