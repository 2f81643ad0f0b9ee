"""What in a Redis server's figures puts BullMQ's jobs at risk, as warnings: a code and the
figures its text needs (the dashboard words them, in the reader's language).

Pure logic over what INFO and CONFIG GET answered, so that it is tested without a server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# BullMQ needs every key it writes kept: any other policy may evict a job, a lock or a list.
SAFE_POLICY = "noeviction"
# Past this share of maxmemory, writes are close to being refused (noeviction) or keys evicted.
MEMORY_HIGH_SHARE = 0.8

EVICTION_POLICY = "eviction-policy"
MEMORY_HIGH = "memory-high"
PERSISTENCE_OFF = "persistence-off"
COMMANDS_REFUSED = "commands-refused"


@dataclass(frozen=True)
class HealthWarning:
    """One warning: ``code`` says which, ``params`` hold the figures its text names."""

    code: str
    params: Mapping[str, Any] = field(default_factory=dict)


def eviction_warning(policy: str | None) -> HealthWarning | None:
    if policy is None or policy == SAFE_POLICY:
        return None
    return HealthWarning(EVICTION_POLICY, {"policy": policy})


def memory_warning(used: int | None, limit: int | None) -> HealthWarning | None:
    """Memory above ``MEMORY_HIGH_SHARE`` of ``maxmemory`` (a limit of 0 is no limit)."""
    if used is None or not limit or used <= limit * MEMORY_HIGH_SHARE:
        return None
    return HealthWarning(MEMORY_HIGH, {"percent": round(100 * used / limit)})


def persistence_warning(
    aof_enabled: bool | None, save: str | None, replicas: int | None
) -> HealthWarning | None:
    """No RDB snapshots and no AOF on a master with replicas: a restarted master comes back
    empty and its replicas copy the empty data set, jobs and all. Undecided (no warning) when
    either setting could not be read."""
    if aof_enabled is None or save is None or not replicas:
        return None
    if aof_enabled or save.strip():
        return None
    return HealthWarning(PERSISTENCE_OFF, {"replicas": replicas})


def refused_warning(refused: Sequence[str]) -> HealthWarning | None:
    """The connection's Redis user may not run ``refused`` (``INFO``, ``CONFIG GET``)."""
    if not refused:
        return None
    return HealthWarning(COMMANDS_REFUSED, {"commands": ", ".join(refused)})


def warnings_of(
    *,
    policy: str | None,
    used: int | None,
    limit: int | None,
    aof_enabled: bool | None,
    save: str | None,
    replicas: int | None,
    refused: Sequence[str],
) -> list[HealthWarning]:
    """Every warning that applies, the gravest first."""
    found = [
        eviction_warning(policy),
        memory_warning(used, limit),
        persistence_warning(aof_enabled, save, replicas),
        refused_warning(refused),
    ]
    return [warning for warning in found if warning is not None]
