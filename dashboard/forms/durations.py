"""Durations as a person types them: "1 h", "30 min", "7 d", "90 s", "1h30m", "500 ms".

A plain whole number is milliseconds, as the API's ``*_ms`` parameters always took.
"""

from __future__ import annotations

import re
from decimal import Decimal

UNIT_MS: dict[str, int] = {
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
    **dict.fromkeys(("w", "week", "weeks"), 604_800_000),
}
# Beyond this the number is a typing slip, not a grace period (and would overflow Lua's doubles).
MAX_MS = 10 * 365 * 86_400_000
ACCEPTED = (
    "a duration such as 1 h, 30 min, 7 d, 90 s, 1h30m or 500 ms "
    "(units: ms, s, min, h, d, w; a plain number is milliseconds)"
)

_WHOLE = re.compile(r"\d+", re.ASCII)
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*", re.ASCII)


class DurationError(ValueError):
    """The text is not a duration; the message says what is accepted."""


def parse_duration_ms(text: str) -> int:
    cleaned = text.strip().lower()
    if _WHOLE.fullmatch(cleaned):
        return _bounded(Decimal(cleaned))
    if not cleaned:
        raise DurationError(f"empty; expected {ACCEPTED}")
    total = Decimal(0)
    position = 0
    while position < len(cleaned):
        part = _PART.match(cleaned, position)
        if part is None:
            raise DurationError(f"{text.strip()!r} is not {ACCEPTED}")
        unit = UNIT_MS.get(part[2])
        if unit is None:
            raise DurationError(
                f"unknown unit {part[2]!r} in {text.strip()!r}; expected {ACCEPTED}"
            )
        total += Decimal(part[1]) * unit
        position = part.end()
    return _bounded(total)


def _bounded(ms: Decimal) -> int:
    if ms > MAX_MS:
        raise DurationError(f"longer than 10 years; expected {ACCEPTED}")
    return int(ms.to_integral_value())
