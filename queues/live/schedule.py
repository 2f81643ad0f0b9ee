"""The follower's pace: when its periodic chores are next due, and how many reads its budgets
(job rows, quiet queues' counts) allow now."""

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

    @property
    def ran(self) -> bool:
        """Whether it has been due at least once."""
        return self._next > 0.0

    def postpone(self, seconds: float) -> None:
        """Not due for ``seconds`` from now."""
        self._next = time.monotonic() + seconds


class Later:
    """A one-off chore: due once, ``seconds`` after it was last armed."""

    def __init__(self) -> None:
        self._at: float | None = None

    def arm(self, seconds: float) -> None:
        self._at = time.monotonic() + seconds

    def due(self) -> bool:
        if self._at is None or time.monotonic() < self._at:
            return False
        self._at = None
        return True


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
    scan_unwatched: Periodic
    flush_samples: Periodic
    tail_logs: Periodic
    check_stuck: Periodic
    resend_again: Later

    def hurry_all(self) -> None:
        for chore in fields(self):
            timer = getattr(self, chore.name)
            if isinstance(timer, Periodic):
                timer.hurry()


class TokenBucket:
    """Reads allowed per second, saved up for at most ``saved_for`` seconds (one by default)."""

    def __init__(self, per_second: float, batch: int, saved_for: float = 1.0) -> None:
        self.per_second = per_second
        # Reads are granted in batches of at least this many (each read is a script call).
        self.batch = batch
        self.most = per_second * saved_for
        self.tokens = 0.0
        self.filled_at = time.monotonic()

    def ready(self, wanted: int = 1) -> bool:
        """``take(wanted)`` would grant reads now (cheap: checked before finding what is due,
        with the number found last time)."""
        saved = self.tokens + (time.monotonic() - self.filled_at) * self.per_second
        return min(self.most, saved) >= max(1, min(wanted, self.batch))

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` reads may be done now (0 until a batch is saved up)."""
        now = time.monotonic()
        rate = self.per_second
        self.tokens = min(self.most, self.tokens + (now - self.filled_at) * rate)
        self.filled_at = now
        if self.tokens < min(wanted, self.batch):
            return 0
        granted = min(wanted, int(self.tokens))
        self.tokens -= granted
        return granted
