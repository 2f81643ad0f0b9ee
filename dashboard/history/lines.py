"""A chart line's points as drawn: a day by the minute has more steps than the plot has
pixels, and thousands of points would only weigh on the page, so steps are drawn in columns,
each as its lowest and highest step (all a pixel shows of them: no peak is smoothed away)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

Values = list[tuple[int, float]]  # (time in ms, value), in time order


@dataclass(frozen=True)
class Segment:
    points: str  # "x,y x,y ..." for a polyline
    single: bool  # one point alone: drawn as a dot
    x: float  # the first point, for the dot
    y: float


def steps_per_column(steps: int, max_columns: int) -> int:
    return max(1, math.ceil(steps / max_columns))


def thinned(index_of: Callable[[int], int], run: Values, per: int) -> Values:
    """``run``'s points, each column of ``per`` steps (``index_of`` gives a time's step)
    as its lowest and highest point, in time order."""
    if per == 1:
        return run
    kept: Values = []
    column: Values = []
    slot: int | None = None
    for t, v in run:
        here = index_of(t) // per
        if here != slot and column:
            kept.extend(envelope(column))
            column = []
        slot = here
        column.append((t, v))
    kept.extend(envelope(column))
    return kept


def envelope(values: Values) -> Values:
    if len(values) <= 2:
        return values
    low = min(values, key=lambda tv: tv[1])
    high = max(values, key=lambda tv: tv[1])
    return sorted({low, high})
