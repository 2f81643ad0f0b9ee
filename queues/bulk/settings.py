"""How bulk actions run: ``BULLPEN["ACTIONS"]`` merged over these defaults."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from queues.config.settings import get_config


@dataclass(frozen=True)
class BulkSettings:
    # Jobs moved by one BullMQ script call: one Redis round trip, a few milliseconds of Redis.
    batch_size: int = 1000
    # Pause between batches, leaving Redis to the workers during a long action.
    pause_ms: int = 0
    # Actions one runner executes at the same time; later ones wait their turn.
    max_running: int = 4
    # The runner's lease: another process takes over this long after the holder dies.
    lease_ttl_ms: int = 5000
    # Seconds between looks for new actions submitted by other processes.
    poll_interval: float = 0.5
    # An action whose runner stopped is resumed if it made progress this recently; older
    # ones are marked interrupted rather than surprising anyone by moving jobs hours later.
    resume_within_s: float = 3600.0
    # Seconds a finished action's record stays readable in Redis.
    keep_s: int = 7 * 86400
    # Finished actions listed by the API (the newest).
    keep_recent: int = 200

    @classmethod
    def from_config(cls) -> BulkSettings:
        given: dict[str, Any] = dict(get_config().get("ACTIONS") or {})
        names = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in given.items() if key in names})
