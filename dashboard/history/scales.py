"""Axis scales: round tick values and the words for them (counts, percentages, durations).

Pure arithmetic, so the charts' geometry is tested without a browser. Durations are in
milliseconds; a duration axis picks one unit for all its ticks from its largest value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from django.utils.formats import number_format

# Multiples of a power of ten a tick step may be.
NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
# Duration units, largest first: (milliseconds in one, symbol, the largest value shown in the
# next unit down before this one is used).
DURATION_UNITS = (
    (86_400_000.0, "d", 2 * 86_400_000.0),
    (3_600_000.0, "h", 2 * 3_600_000.0),
    (60_000.0, "min", 2 * 60_000.0),
    (1000.0, "s", 1000.0),
    (1.0, "ms", 0.0),
)
# Compact suffixes for axis labels of large counts; hover texts give the exact numbers.
COMPACT = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


@dataclass(frozen=True)
class Scale:
    """Ticks from 0 to ``top`` (the last tick) and how to write a value of this axis."""

    ticks: list[float]
    labels: list[str]

    @property
    def top(self) -> float:
        return self.ticks[-1]


def nice_step(span: float, count: int) -> float:
    """The round step (1, 2, 2.5 or 5 times a power of ten) giving about ``count`` ticks."""
    raw = span / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    for multiple in NICE_STEPS:
        if raw <= multiple * power * (1 + 1e-9):
            return multiple * power
    return 10.0 * power  # pragma: no cover - NICE_STEPS ends with 10


def nice_ticks(peak: float, count: int = 4, whole: bool = False) -> list[float]:
    """Ticks from 0 up to the first at or above ``peak``; ``whole`` keeps steps whole numbers
    (job counts). An axis with nothing to show (``peak`` 0, negative, not finite) runs 0 to 1."""
    if not math.isfinite(peak) or peak <= 0:
        return [0.0, 1.0]
    step = nice_step(peak, count)
    if whole:
        step = max(1.0, math.ceil(step))
    steps = math.ceil(peak / step - 1e-9)
    return [round(i * step, 10) for i in range(steps + 1)]


def _number(value: float, decimals: int) -> str:
    return number_format(round(value, decimals), decimals if value % 1 else 0, use_l10n=True)


def _decimals(values: list[float]) -> int:
    """Decimals enough to tell round tick values apart (0, 1 or 2)."""
    for decimals in (0, 1, 2):
        if all(abs(v - round(v, decimals)) < 1e-9 for v in values):
            return decimals
    return 2


def count_label(value: float) -> str:
    for size, suffix in COMPACT:
        if abs(value) >= size:
            return _number(value / size, 1) + suffix
    return _number(value, _decimals([value]))


def count_scale(peak: float) -> Scale:
    ticks = nice_ticks(peak, whole=True)
    return Scale(ticks, [count_label(t) for t in ticks])


def percent_scale(peak_rate: float) -> Scale:
    """A failure-rate axis (rates 0 to 1), at most up to 100 %."""
    ticks = nice_ticks(min(1.0, peak_rate) * 100)
    ticks = [t / 100 for t in ticks]
    decimals = _decimals([t * 100 for t in ticks])
    return Scale(ticks, [_number(t * 100, decimals) + " %" for t in ticks])


def duration_unit(peak_ms: float) -> tuple[float, str]:
    """The unit a duration axis whose largest value is ``peak_ms`` is written in."""
    for size, symbol, above in DURATION_UNITS:
        if peak_ms >= above:
            return size, symbol
    return 1.0, "ms"


def duration_scale(peak_ms: float) -> Scale:
    # The unit of the top tick, not of the peak: 907 ms tops out at "1 s", not "1000 ms".
    size, symbol = duration_unit(nice_ticks(peak_ms)[-1] if peak_ms > 0 else 0.0)
    in_unit = nice_ticks(peak_ms / size) if peak_ms > 0 else [0.0, 1.0]
    decimals = _decimals(in_unit)
    return Scale([t * size for t in in_unit], [f"{_number(t, decimals)} {symbol}" for t in in_unit])


def duration_text(ms: float | None) -> str:
    """One duration as a person reads it: ``850 ms``, ``1.2 s``, ``3.5 min``, ``2.1 h``; an
    empty string when there is none."""
    if ms is None or not math.isfinite(ms):
        return ""
    size, symbol = duration_unit(abs(ms))
    value = ms / size
    decimals = 0 if size == 1.0 or abs(value) >= 100 else 1
    return f"{_number(value, decimals)} {symbol}"


def percent_text(rate: float | None) -> str:
    if rate is None or not math.isfinite(rate):
        return ""
    value = rate * 100
    decimals = 0 if value in (0.0, 100.0) else (1 if value >= 1 else 2)
    return _number(value, decimals) + " %"


Formatter = Callable[[float | None], str]
