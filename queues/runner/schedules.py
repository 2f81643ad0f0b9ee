"""Repeatable jobs: BullMQ job schedulers, declared beside their handler and registered on
every start.

Registration is idempotent: a scheduler has a fixed id, and ``upsertJobScheduler`` replaces the
scheduler of that id (and its pending next job) instead of adding one, so starting ten workers
ten times leaves one scheduler. Cron schedules must name their time zone: "09:00 every Monday"
means nothing until it says where.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bullmq import Queue
from croniter import croniter

from queues.runner.errors import RunnerConfigError


@dataclass(frozen=True)
class Schedule:
    id: str  # the scheduler id: keep it stable, it is what makes registration idempotent
    name: str  # the name of the jobs it produces
    cron: str | None = None  # "0 9 * * 1" (or 6 fields, seconds first)
    tz: str | None = None  # an IANA zone, required with cron: "Europe/Paris"
    every_ms: int | None = None  # or: every N milliseconds
    data: Any = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.id or ":" in self.id:
            raise RunnerConfigError(f"Schedule id {self.id!r} must be non-empty, without ':'")
        if (self.cron is None) == (self.every_ms is None):
            raise RunnerConfigError(f"Schedule {self.id!r} needs exactly one of cron, every_ms")
        if self.cron is not None:
            if not self.tz:
                raise RunnerConfigError(
                    f"Schedule {self.id!r} has a cron pattern but no tz: name its time zone "
                    '(e.g. tz="Europe/Paris" or tz="UTC")'
                )
            try:
                ZoneInfo(self.tz)
            except (ZoneInfoNotFoundError, ValueError) as error:
                raise RunnerConfigError(f"Schedule {self.id!r}: unknown tz {self.tz!r}") from error
            if not croniter.is_valid(self.cron, second_at_beginning=True):
                raise RunnerConfigError(f"Schedule {self.id!r}: invalid cron {self.cron!r}")
        every = self.every_ms
        if every is not None and (type(every) is not int or every < 1):
            raise RunnerConfigError(f"Schedule {self.id!r}: every_ms must be a positive integer")

    def repeat_options(self) -> dict[str, Any]:
        if self.cron is not None:
            return {"pattern": self.cron, "tz": self.tz}
        return {"every": self.every_ms}


async def register_schedules(
    queue: Queue, schedules: Iterable[Schedule], job_options: dict[str, Any]
) -> list[str]:
    """Create or update each scheduler on ``queue``; returns their ids."""
    ids = []
    for schedule in schedules:
        await queue.upsertJobScheduler(
            schedule.id, schedule.repeat_options(), schedule.name, schedule.data, job_options
        )
        ids.append(schedule.id)
    return ids
