"""Alert notices that have not reached every target yet, tried again until they have.

A notice whose target stays away through its first tries (a webhook down, the mail server
refusing) is kept, with the targets still owed it, and tried again after a pause that doubles
from ``RETRY_FIRST_S`` up to ``RETRY_MOST_S``, for as long as it takes. A target that refuses
for good (the deliverer says which) is not owed it any more.

When the alert ends before its start reached a target, both notices are dropped for that
target: it is never told "resolved" about an alert it never saw, and never told of the start of
an alert that is over.

At most ``MOST_KEPT`` notices are kept (the oldest are dropped, and said to be): a target away
for days must not grow the state without end. The state is plain data (``dump`` / ``load``),
kept in Redis by alert_watch.py so that a process taking the sending over goes on with it.
Times are wall-clock seconds: they are compared across processes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from queues.alerts.state import FIRING, RESOLVED, Notice

log = logging.getLogger("bullpen.alerts")

RETRY_FIRST_S = 30.0
RETRY_MOST_S = 600.0
MOST_KEPT = 200


@dataclass(frozen=True)
class Kept:
    notice: Notice
    owed: frozenset[str]  # the targets it has not reached
    rounds: int  # rounds of tries so far
    due_at: float  # when to try again

    def as_json(self) -> dict[str, Any]:
        return {
            "notice": self.notice.as_json(),
            "owed": sorted(self.owed),
            "rounds": self.rounds,
            "dueAt": self.due_at,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Kept:
        return cls(
            Notice.from_json(data["notice"]),
            frozenset(str(target) for target in data["owed"]),
            int(data["rounds"]),
            float(data["dueAt"]),
        )


def pause_after(rounds: int) -> float:
    """Seconds before the next round, after ``rounds`` rounds failed."""
    return float(min(RETRY_MOST_S, RETRY_FIRST_S * 2 ** min(max(rounds - 1, 0), 30)))


class Undelivered:
    def __init__(self) -> None:
        self._kept: dict[str, Kept] = {}  # by notice id, the oldest first

    def __len__(self) -> int:
        return len(self._kept)

    def __contains__(self, notice_id: object) -> bool:
        return notice_id in self._kept

    def tried(self, notice: Notice, owed: Iterable[str], now: float) -> None:
        """A round of tries of ``notice`` ended; ``owed`` are the targets it did not reach (and
        that may take it later). Kept until it reached them; dropped once it has."""
        still = frozenset(owed)
        earlier = self._kept.pop(notice.id, None)
        if not still:
            return
        rounds = 1 if earlier is None else earlier.rounds + 1
        self._kept[notice.id] = Kept(notice, still, rounds, now + pause_after(rounds))
        self._bound()

    def forget(self, notice_id: str) -> None:
        self._kept.pop(notice_id, None)

    def due(self, now: float) -> list[Kept]:
        """The notices to try again now, the oldest first."""
        return [kept for kept in self._kept.values() if kept.due_at <= now]

    def never_told(self, resolved: Notice) -> frozenset[str]:
        """The targets ``resolved``'s start never reached: its start is dropped (it is kept only
        for them), and its end is not theirs either."""
        if resolved.status != RESOLVED:
            return frozenset()
        unseen: frozenset[str] = frozenset()
        for kept in list(self._kept.values()):
            if kept.notice.status == FIRING and kept.notice.key == resolved.key:
                unseen |= kept.owed
                del self._kept[kept.notice.id]
        if unseen:
            log.info(
                "alerts: %s on %r ended before its start reached %d target(s): neither is sent",
                resolved.alert.rule,
                resolved.queue,
                len(unseen),
            )
        return unseen

    def _bound(self) -> None:
        while len(self._kept) > MOST_KEPT:
            oldest = next(iter(self._kept.values()))
            del self._kept[oldest.notice.id]
            log.error(
                "alerts: more than %d notices undelivered; dropped the oldest (%s %s on %r)",
                MOST_KEPT,
                oldest.notice.status,
                oldest.notice.alert.rule,
                oldest.notice.queue,
            )

    def dump(self) -> list[dict[str, Any]]:
        return [kept.as_json() for kept in self._kept.values()]

    def load(self, dumped: Any) -> None:
        """Take over a dumped state (unreadable items are dropped)."""
        self._kept = {}
        for data in dumped if isinstance(dumped, list) else []:
            try:
                kept = Kept.from_json(data)
            except (AttributeError, KeyError, TypeError, ValueError):
                continue
            self._kept[kept.notice.id] = kept
        self._bound()
