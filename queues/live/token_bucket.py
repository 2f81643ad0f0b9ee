"""Reads allowed per second: the live reader's budgets (job rows, quiet queues' counts)."""

from __future__ import annotations

import time


class TokenBucket:
    """Reads allowed per second, saved up for at most one second."""

    def __init__(self, per_second: float, batch: int) -> None:
        self.per_second = per_second
        # Reads are granted in batches of at least this many (each read is a script call).
        self.batch = batch
        self.tokens = 0.0
        self.filled_at = time.monotonic()

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` reads may be done now (0 until a batch is saved up)."""
        now = time.monotonic()
        rate = self.per_second
        self.tokens = min(rate, self.tokens + (now - self.filled_at) * rate)
        self.filled_at = now
        if self.tokens < min(wanted, self.batch):
            return 0
        granted = min(wanted, int(self.tokens))
        self.tokens -= granted
        return granted
