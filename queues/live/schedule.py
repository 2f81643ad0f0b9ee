"""When the follower's periodic chores are next due."""

from __future__ import annotations

import time
from dataclasses import dataclass, fields


class Periodic:
    """A chore done at most once every ``every`` seconds; due at once the first time."""

    def __init__(self, every: float) -> None:
        self.every = every
        self._next = 0.0

    def due(self) -> bool:
        """True when the chore is due now; the next run is then ``every`` seconds away."""
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + self.every
        return True

    def hurry(self) -> None:
        """Due at once, whenever it last ran."""
        self._next = 0.0


@dataclass(frozen=True)
class Chores:
    """The follower's periodic chores, one timer each."""

    renew_lease: Periodic
    publish_interest: Periodic
    heartbeat: Periodic
    read_interest: Periodic
    full_refresh: Periodic
    resend_counts: Periodic
    discover: Periodic
    adopt: Periodic
    flush_samples: Periodic
    tail_logs: Periodic

    def hurry_all(self) -> None:
        for chore in fields(self):
            getattr(self, chore.name).hurry()
