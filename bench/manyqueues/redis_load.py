"""How many commands Redis ran in a window, with what ran anyway taken out.

The count is the growth of the summed ``calls`` of ``INFO commandstats`` (Redis 7 counts
the commands a Lua script runs as well as the ``EVALSHA``); the bench's own first ``INFO``
is taken out. "Anyway" is a window of the same length with nobody watching: the server's
background work (Bullpen's discovery, alerts, a live follower left running) and nothing else.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import redis as redis_py

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from redis_commands import calls_diff, command_calls  # bench/ is not a package: imported by path


@dataclass
class Window:
    """The commands of one window, by command, and how long it lasted."""

    seconds: float
    calls: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.calls.values())


class CommandCounter:
    def __init__(self, client: redis_py.Redis) -> None:
        self.client = client
        self._before: dict[str, int] = {}
        self._t0 = 0.0

    def start(self) -> None:
        self._before = command_calls(self.client)
        self._t0 = time.monotonic()

    def stop(self) -> Window:
        after = command_calls(self.client)
        return Window(time.monotonic() - self._t0, calls_diff(self._before, after))

    def quiet_window(self, seconds: float) -> Window:
        """A window of `seconds` in which the bench does nothing."""
        self.start()
        time.sleep(seconds)
        return self.stop()


@dataclass
class NetCommands:
    """A window's commands minus the quiet window's, scaled to the same length."""

    total: float
    quiet: float
    by_command: dict[str, float]


def net_of(active: Window, quiet: Window) -> NetCommands:
    scale = active.seconds / quiet.seconds if quiet.seconds > 0 else 1.0
    by_command = {}
    for name in set(active.calls) | set(quiet.calls):
        value = active.calls.get(name, 0) - quiet.calls.get(name, 0) * scale
        if abs(value) >= 0.5:
            by_command[name] = round(value, 1)
    ordered = dict(sorted(by_command.items(), key=lambda kv: -kv[1]))
    quiet_total = quiet.total * scale
    return NetCommands(max(0.0, active.total - quiet_total), quiet_total, ordered)
