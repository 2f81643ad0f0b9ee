"""What the alert sender keeps of a queue's history rules between passes: their last decision
and what it was made from, so that a pass that would read the same minutes again does not.

Minutes are written once, when they close, and the queue's ``...:last`` moves with each one
the recorder writes (queues/history/recorder.py; a reader that starts fills the minutes after
it the same way). While it stands and a pass is in the same minute as the one that decided,
the same minutes would be read again and decide the same: a second pass in a minute reads no
history of that queue. Not for a window that reaches back to minutes whose sketches may
expire meanwhile (MINUTE_SKETCH_TTL_S).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from queues.alerts.thresholds import Alert
from queues.history.storage import MINUTE_MS, MINUTE_SKETCH_TTL_S
from queues.reads.keys import QueueRef

# Queues kept at most: then it starts again.
_KEPT = 200_000


@dataclass(frozen=True)
class Mark:
    """What a queue's history rules decided from: the minute its history was last recorded
    (``...:last``, set with every minute the recorder writes), the minute of the pass, how
    the window measures and the queue's thresholds (their object, kept by thresholds.py)."""

    last: Any
    minute: int
    measure: Any  # rules.Measure: its window_s, and equal to another of the same settings
    limits: Mapping[str, float | None]

    def same(self, other: Mark) -> bool:
        return (
            self.last == other.last
            and self.minute == other.minute
            and self.measure == other.measure
            and self.limits is other.limits
        )


# Per queue, its history rules' last decision and what it was made from.
_decided: dict[QueueRef, tuple[Mark, list[Alert]]] = {}


def recall(ref: QueueRef, mark: Mark) -> list[Alert] | None:
    kept = _decided.get(ref)
    return kept[1] if kept is not None and kept[0].same(mark) else None


def remember(ref: QueueRef, mark: Mark, alerts: list[Alert]) -> None:
    if mark.measure.window_s * 1000 + 2 * MINUTE_MS > MINUTE_SKETCH_TTL_S * 1000:
        return
    if len(_decided) >= _KEPT:
        _decided.clear()
    _decided[ref] = (mark, list(alerts))


def forget() -> None:
    """Drops every decision kept: a process that takes the alert lease over starts cold."""
    _decided.clear()
