"""Per-queue options of the runner, with the safe defaults of a production BullMQ deployment.

Job options (attempts, backoff, retention) are what producers put on each job; the runner's
producer helpers use them, and its workers apply them to jobs that arrive without their own
(e.g. added by a Node service with no ``attempts``). Worker options (concurrency, limiter,
locks) apply to the runner's workers of the queue.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

from queues.runner.errors import RunnerConfigError
from queues.runner.fairness import TenantLimit
from queues.runner.limiter import Limiter

# Points kept by BullMQ's per-minute metrics (``<prefix>:<queue>:metrics:*``): one week.
METRICS_POINTS = 7 * 24 * 60
RUN_RETRY_DELAY_MS = 1000


def _whole(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RunnerConfigError(f"{name} must be a whole number from {minimum} up, not {value!r}")


@dataclass(frozen=True)
class QueueOptions:
    concurrency: int = 5
    limiter: Limiter | None = None
    attempts: int = 5
    backoff_ms: int = 1000  # exponential: 1 s, 2 s, 4 s, 8 s...
    remove_on_complete: int = 1000  # completed jobs kept
    remove_on_fail: int = 5000  # failed jobs kept
    lock_duration_ms: int = 30_000
    stalled_interval_ms: int = 30_000
    max_stalled_count: int = 1
    per_tenant: TenantLimit | None = None
    dead_letter: bool = True  # copy jobs whose last attempt failed to the dead-letter queue
    # Seconds an attempt may run; past it the attempt fails ("timed out after ...") and the
    # job's attempts and backoff decide what follows (dispatch.py). None: no limit.
    timeout: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.attempts, float) and math.isinf(self.attempts):
            raise RunnerConfigError(
                "attempts cannot be infinite: a job that always fails would retry forever and "
                "never reach the dead-letter queue; choose a number such as 5"
            )
        if self.attempts == 0:
            raise RunnerConfigError(
                "attempts cannot be 0: BullMQ would silently treat it as 1; say attempts=1 for "
                "a single try, or more (the default is 5)"
            )
        _whole("attempts", self.attempts, 1)
        _whole("concurrency", self.concurrency, 1)
        _whole("backoff_ms", self.backoff_ms, 0)
        _whole("remove_on_complete", self.remove_on_complete, 0)
        _whole("remove_on_fail", self.remove_on_fail, 0)
        _whole("lock_duration_ms", self.lock_duration_ms, 100)
        _whole("stalled_interval_ms", self.stalled_interval_ms, 100)
        _whole("max_stalled_count", self.max_stalled_count, 0)
        if self.timeout is not None:
            number = isinstance(self.timeout, int | float) and not isinstance(self.timeout, bool)
            if not number or not 0 < self.timeout < math.inf:
                raise RunnerConfigError(
                    f"timeout must be a number of seconds above 0 (or None), not {self.timeout!r}"
                )

    def job_options(self) -> dict[str, Any]:
        """BullMQ job options for producers: attempts, backoff, retention."""
        return {
            "attempts": self.attempts,
            "backoff": {"type": "exponential", "delay": self.backoff_ms},
            "removeOnComplete": {"count": self.remove_on_complete},
            "removeOnFail": {"count": self.remove_on_fail},
        }

    def worker_options(self) -> dict[str, Any]:
        """BullMQ worker options (the connection, prefix and name are added by the runner)."""
        opts: dict[str, Any] = {
            "concurrency": self.concurrency,
            "lockDuration": self.lock_duration_ms,
            "stalledInterval": self.stalled_interval_ms,
            "maxStalledCount": self.max_stalled_count,
            "removeOnComplete": {"count": self.remove_on_complete},
            "removeOnFail": {"count": self.remove_on_fail},
            "metrics": {"maxDataPoints": METRICS_POINTS},
            "autorun": False,
            # After Redis went away, fetch again 1 s after the client's own retries gave up,
            # not the package's 15 s: a restart costs seconds of work, not a quarter minute.
            "runRetryDelay": RUN_RETRY_DELAY_MS,
        }
        if self.limiter is not None:
            opts["limiter"] = self.limiter.as_bullmq()
        return opts

    def with_changes(self, **changes: Any) -> QueueOptions:
        return replace(self, **changes)

    @classmethod
    def from_mapping(cls, mapping: dict[str, Any]) -> QueueOptions:
        """From a settings entry: the field names above; ``limiter`` and ``per_tenant`` as
        mappings (``{"max": 50, "duration": 1000}``)."""
        known = {field.name for field in fields(cls)}
        unknown = set(mapping) - known
        if unknown:
            raise RunnerConfigError(
                f"Unknown queue option(s) {sorted(unknown)}; known: {sorted(known)}"
            )
        values = dict(mapping)
        if values.get("limiter") is not None:
            values["limiter"] = Limiter.from_mapping(values["limiter"])
        if values.get("per_tenant") is not None:
            values["per_tenant"] = TenantLimit.from_mapping(values["per_tenant"])
        return cls(**values)
