"""Which connections could not be reached lately, and why: with several Redis servers one that is
down is left out of the overview (and said to be down) while the others are read.

A connection found down is not tried again by overview reads for ``RETRY_AFTER_S`` seconds, so
that every page does not wait out the connect timeout of a server known to be away.
"""

from __future__ import annotations

import time

from queues.config.settings import on_change

# Seconds a connection found down is skipped by reads that can do without it.
RETRY_AFTER_S = 5.0

_down: dict[str, tuple[float, str]] = {}  # connection → (when it was found down, why)


def note_down(connection: str, detail: str) -> None:
    _down[connection] = (time.monotonic(), detail)


def note_up(connection: str) -> None:
    _down.pop(connection, None)


def unreachable() -> dict[str, str]:
    """Connections whose last read failed, and why."""
    return {name: detail for name, (_at, detail) in _down.items()}


def skip(connection: str) -> bool:
    """Whether a read that can do without ``connection`` should leave it out for now."""
    found = _down.get(connection)
    return found is not None and time.monotonic() - found[0] < RETRY_AFTER_S


@on_change
def forget() -> None:
    """Forget every observation (the connections may have changed; tests)."""
    _down.clear()
