"""Which connections could not be reached lately, and why: with several Redis servers one that is
down is left out of the overview (and said to be down) while the others are read. Likewise the
queues of a Redis Cluster master that is down, while the other masters' queues are read.

A connection found down is not tried again by overview reads for ``RETRY_AFTER_S`` seconds, so
that every page does not wait out the connect timeout of a server known to be away.
"""

from __future__ import annotations

import time

from queues.config.settings import on_change
from queues.reads.keys import QueueRef

# Seconds a connection found down is skipped by reads that can do without it.
RETRY_AFTER_S = 5.0

_down: dict[str, tuple[float, str]] = {}  # connection → (when it was found down, why)
# Queues whose last read failed while others of their connection were read (a Cluster master
# down): queue → (when, why). Forgotten once read again, or when not tried again for a while
# (the queue may have gone with its master's data).
_queues_down: dict[QueueRef, tuple[float, str]] = {}
QUEUE_DOWN_KEPT_S = 60.0


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


def note_queues(read: list[QueueRef], down: dict[QueueRef, str]) -> None:
    """``read`` were read now; ``down`` could not be, and why."""
    for ref in read:
        _queues_down.pop(ref, None)
    now = time.monotonic()
    for ref, detail in down.items():
        _queues_down[ref] = (now, detail)


def queues_down() -> dict[QueueRef, str]:
    """Queues that could not be read lately while their connection could, and why."""
    now = time.monotonic()
    return {
        ref: detail
        for ref, (at, detail) in _queues_down.items()
        if now - at < QUEUE_DOWN_KEPT_S and not skip(ref.connection)
    }


@on_change
def forget() -> None:
    """Forget every observation (the connections may have changed; tests)."""
    _down.clear()
    _queues_down.clear()
