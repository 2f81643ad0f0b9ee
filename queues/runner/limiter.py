"""The limiter: at most ``max`` jobs started per ``duration`` milliseconds on a queue.

It is BullMQ's own limiter, a counter at ``<prefix>:<queue>:limiter`` that the ``moveToActive``
and ``moveToFinished`` scripts increment and expire, so every worker of the queue (Python or
Node) shares it. What the runner changes is the wait once the limit is reached: the Python
package's worker waits its drain delay (5 s) where Node waits the limiter's remaining time, and
so delivers about a fifth of the configured rate. The runner's worker blocks on the queue's
marker exactly until the window ends (:func:`resume_at`), then takes the next ``max`` jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from queues.runner.errors import RunnerConfigError


@dataclass(frozen=True)
class Limiter:
    max: int
    duration_ms: int

    def __post_init__(self) -> None:
        for field, value in (("max", self.max), ("duration_ms", self.duration_ms)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RunnerConfigError(
                    f"Limiter {field} must be a whole number from 1 up, not {value!r}"
                )

    def as_bullmq(self) -> dict[str, int]:
        return {"max": self.max, "duration": self.duration_ms}

    @classmethod
    def from_mapping(cls, value: Any) -> Limiter:
        """``{"max": 50, "duration": 1000}`` (BullMQ's spelling) or ``duration_ms``."""
        if isinstance(value, Limiter):
            return value
        if not isinstance(value, dict) or "max" not in value:
            raise RunnerConfigError(f'A limiter is {{"max": N, "duration": ms}}, not {value!r}')
        mapping: dict[str, Any] = value
        duration = mapping["duration"] if "duration" in mapping else mapping.get("duration_ms", 0)
        return cls(int(mapping["max"]), int(duration))


def resume_at(now_ms: int, limit_ttl_ms: int) -> int:
    """When a rate-limited worker may take jobs again: when the limiter's window ends.

    ``limit_ttl_ms`` is the limiter key's remaining time, as the scripts report it.
    """
    return now_ms + max(int(limit_ttl_ms), 1)
