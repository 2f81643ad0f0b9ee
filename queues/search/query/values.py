"""A term's value read as what its field compares with: a number, or a time in ms since the
epoch (``now``, ``now-15m``, ``2026-12-01``, ``2026-12-01T08:30:00Z``)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

UNITS_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# Longest number a comparison reads: more digits than any float holds buy nothing.
MAX_NUMBER_CHARS = 40


def number(text: str) -> float | None:
    """``text`` as a finite number, or None."""
    if not text or len(text) > MAX_NUMBER_CHARS:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def time_ms(text: str, now_ms: int) -> int | None:
    """``text`` as ms since the epoch, or None. ``now-<N><unit>`` counts back from ``now_ms``;
    a date without a zone is UTC."""
    lowered = text.lower()
    if lowered == "now":
        return now_ms
    if lowered.startswith("now-") and len(lowered) > 5 and lowered[-1] in UNITS_MS:
        count = lowered[4:-1]
        if count.isascii() and count.isdigit() and len(count) <= 12:
            return now_ms - int(count) * UNITS_MS[lowered[-1]]
        return None
    if len(text) > 40:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
