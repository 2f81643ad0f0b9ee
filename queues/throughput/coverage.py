"""Which minutes Bullpen's own samples cover: a minute nobody counted is unknown, not zero.

The sampler pushes only minutes that had events, so a minute missing from a queue's samples
reads as zero only while the live reader was counting. Each reader's stretch of counting is
kept per connection in ``<LIVE_KEY_PREFIX>:sampled``, a hash of ``start ms → through ms``: from
its first flush after the streams were (re)followed to its latest flush, which pushed every
minute closed by then. A reader that restarts its streams (a process start, the lease taken
over, a page after an idle spell) starts a stretch of its own; the time between two is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from queues.redis.connections import own_key_prefix

MINUTE_MS = 60_000
GRACE_MS = 2_000  # events of a minute may arrive a little after it ends
# Stretches are kept this long after their last flush (the day window's length, and a margin).
KEEP_MS = 25 * 3_600_000


def sampled_key(connection: str | None) -> str:
    return f"{own_key_prefix(connection)}:sampled"


def stretches(reply: Any) -> list[tuple[int, int]]:
    """``(start, through)`` pairs of an ``HGETALL`` reply (a dict, or a flat list from a
    pipeline); anything unreadable is left out: unknown."""
    if isinstance(reply, dict):
        pairs = list(reply.items())
    elif isinstance(reply, list):
        pairs = list(zip(reply[::2], reply[1::2], strict=False))
    else:
        return []
    found = []
    for start, through in pairs:
        try:
            found.append((int(start), int(through)))
        except (TypeError, ValueError):
            continue
    return found


def counted(minute: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether a stretch counted the whole minute and pushed it once it closed. The minute
    the reader started in is left out: its first seconds went uncounted."""
    return any(
        start <= minute and minute + MINUTE_MS + GRACE_MS <= through for start, through in spans
    )
