"""The figures of one run: per number of queues, per server; medians over the loads."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from page_load import PageLoad
from redis_load import NetCommands


@dataclass
class IdleViewer:
    """Redis commands a minute with one page open and left alone, and with none."""

    seconds: float
    with_viewer_per_min: float
    quiet_per_min: float
    requests_per_min: float
    by_command_per_min: dict[str, float]

    @property
    def net_per_min(self) -> float:
        return max(0.0, self.with_viewer_per_min - self.quiet_per_min)


@dataclass
class ApiCall:
    """The overview's JSON route alone: one request's time, size and Redis commands."""

    path: str
    ms: float
    bytes: int
    commands: float


@dataclass
class ServerResult:
    server: str
    queues: int
    url: str
    loads: list[PageLoad] = field(default_factory=list)
    view_commands: list[NetCommands] = field(default_factory=list)
    idle_viewer: IdleViewer | None = None
    api: list[ApiCall] = field(default_factory=list)
    rss_bytes: int | None = None
    notes: list[str] = field(default_factory=list)

    def median_load(self, get: Callable[[PageLoad], float | int | None]) -> float | None:
        return median([get(load) for load in self.loads])

    @property
    def commands_per_view(self) -> float | None:
        return median([c.total for c in self.view_commands])

    @property
    def commands_per_queue(self) -> float | None:
        per_view = self.commands_per_view
        return per_view / self.queues if per_view is not None else None

    def median_api(self, get: Callable[[ApiCall], float | int]) -> float | None:
        return median([get(call) for call in self.api])

    def metric(self, name: str) -> float | None:
        """A figure by name, as the targets name them."""
        getters: dict[str, Callable[[], float | None]] = {
            "fcp_ms": lambda: self.median_load(lambda p: p.fcp_ms),
            "network_idle_ms": lambda: self.median_load(lambda p: p.network_idle_ms),
            "requests": lambda: self.median_load(lambda p: p.requests),
            "html_body_bytes": lambda: self.median_load(lambda p: p.html_body_bytes),
            "total_wire_bytes": lambda: self.median_load(lambda p: p.total_wire_bytes),
            "commands_per_view": lambda: self.commands_per_view,
            "commands_per_queue": lambda: self.commands_per_queue,
            "idle_viewer_per_min": lambda: (
                self.idle_viewer.net_per_min if self.idle_viewer else None
            ),
            "rss_bytes": lambda: float(self.rss_bytes) if self.rss_bytes is not None else None,
        }
        return getters[name]()

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "queues": self.queues,
            "url": self.url,
            "medians": {
                name: self.metric(name)
                for name in (
                    "fcp_ms",
                    "network_idle_ms",
                    "requests",
                    "html_body_bytes",
                    "total_wire_bytes",
                    "commands_per_view",
                    "commands_per_queue",
                    "idle_viewer_per_min",
                    "rss_bytes",
                )
            },
            "loads": [load.__dict__ for load in self.loads],
            "view_commands": [c.__dict__ for c in self.view_commands],
            "idle_viewer": (
                dict(self.idle_viewer.__dict__, net_per_min=self.idle_viewer.net_per_min)
                if self.idle_viewer
                else None
            ),
            "api": [call.__dict__ for call in self.api],
            "notes": self.notes,
        }


@dataclass
class SizeResult:
    """Everything measured at one number of queues."""

    queues: int
    seed: dict[str, Any]
    seed_seconds: float
    redis_memory_bytes: int
    keys: int
    servers: dict[str, ServerResult] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "queues": self.queues,
            "seed": self.seed,
            "seed_seconds": self.seed_seconds,
            "redis_memory_bytes": self.redis_memory_bytes,
            "keys": self.keys,
            "servers": {name: result.to_json() for name, result in self.servers.items()},
        }


def median(values: list[float | int | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return statistics.median(present) if present else None
