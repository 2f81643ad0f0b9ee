"""Which hygiene warnings a queue's figures call for: pure logic, no Redis.

Each warning names the BullMQ option that fixes it; the dashboard words it (translated), the
API carries its code, option and figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# More finished jobs than this kept in one set: BullMQ keeps every one unless the jobs are added
# with removeOnComplete / removeOnFail, and each keeps its hash (data, return value, stack
# traces) in Redis's memory. Bullpen's own runner keeps 1,000 completed jobs: not warned.
KEEP_LIMIT = 1000
# BullMQ's cap on a queue's events stream when the queue's meta hash names none.
DEFAULT_MAX_LEN_EVENTS = 10_000

KEEPS_COMPLETED = "keeps-completed"
KEEPS_FAILED = "keeps-failed"
EVENTS_AT_CAP = "events-at-cap"
NO_METRICS = "no-metrics"
LEGACY_REPEATABLE = "legacy-repeatable"


@dataclass(frozen=True)
class Figures:
    """What the warnings are decided on, as read from the queue's keys."""

    completed_kept: int
    failed_kept: int
    events_length: int
    max_len_events: int
    metrics_keys: int  # how many of metrics:completed and metrics:failed exist
    legacy_repeatables: int


@dataclass(frozen=True)
class HygieneWarning:
    code: str
    option: str  # the BullMQ option to change
    figures: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "option": self.option, **self.figures}


def warnings_for(found: Figures) -> list[HygieneWarning]:
    """The warnings ``found`` calls for, in the order the page lists them."""
    warned: list[HygieneWarning] = []
    if found.completed_kept > KEEP_LIMIT:
        warned.append(
            HygieneWarning(KEEPS_COMPLETED, "removeOnComplete", {"kept": found.completed_kept})
        )
    if found.failed_kept > KEEP_LIMIT:
        warned.append(HygieneWarning(KEEPS_FAILED, "removeOnFail", {"kept": found.failed_kept}))
    # BullMQ trims the stream approximately (whole stream nodes), never below its cap: once
    # the cap is reached the stream stays at or just above it.
    if found.max_len_events > 0 and found.events_length >= found.max_len_events:
        warned.append(
            HygieneWarning(
                EVENTS_AT_CAP,
                "streams.events.maxLen",
                {"length": found.events_length, "cap": found.max_len_events},
            )
        )
    # A worker started with the metrics option writes metrics:completed (or :failed) on the
    # first job it finishes; finished jobs and neither key: no worker records them.
    if found.metrics_keys == 0 and found.completed_kept + found.failed_kept > 0:
        warned.append(HygieneWarning(NO_METRICS, "metrics"))
    if found.legacy_repeatables > 0:
        warned.append(
            HygieneWarning(
                LEGACY_REPEATABLE, "upsertJobScheduler", {"count": found.legacy_repeatables}
            )
        )
    return warned
