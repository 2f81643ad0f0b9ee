"""Where history lives in Redis, under Bullpen's own key prefix, and for how long.

Per queue, two strings per span, written once, whole (``SET NX``, in one pipeline), so a
restart, a lease takeover or a Redis restart in the middle never counts a job twice:

- its summary, ``<own>:hist:<prefix>:<queue>:ms:<minute ms>`` (kept 25 h), ``...:hs:<hour ms>``
  (31 d) and ``...:ds:<day ms>`` (91 d): counts per job name and the queue's percentiles
  (summary.py), all a chart's point needs;
- its sketches, ``...:m:<minute ms>`` (kept 3 h), ``...:h:<hour ms>`` (50 h) and ``...:d:<day
  ms>`` (91 d), the JSON of record.py with one entry per job name: only as long as roll-ups and
  a range's totals need them (a minute until its hour is rolled up and the last hours' totals
  are read from hours, an hour until its day is);
- the queue's record alone (record.py's list: every name added up), ``...:hq:<hour ms>`` and
  ``...:dq:<day ms>``, kept as long as the span's sketches: what a range's totals read (a
  day's span holds every name's sketches, several times the queue's record). Written with
  the span by roll-ups; an hour or day rolled up before has none, and its span is read.

``...:names`` holds the job names
recorded (at most ``NAME_CAP``; later ones are recorded as ``FOLDED_NAME``) and ``...:last``
the newest minute written, where a reader that starts back-fills from.
"""

from __future__ import annotations

from collections.abc import Iterable

from queues.reads.keys import QueueRef
from queues.redis.connections import own_key_prefix

MINUTE_MS = 60_000
HOUR_MS = 3_600_000
DAY_MS = 86_400_000
# How long each tier's spans are kept, with a margin over what the ranges read.
MINUTE_TTL_S = 25 * 3600
HOUR_TTL_S = 31 * 86400
DAY_TTL_S = 91 * 86400
NAMES_TTL_S = DAY_TTL_S
NAME_CAP = 200
FOLDED_NAME = "(other)"

# How long each tier's sketches are kept: past a roll-up's and a range's edge's needs.
MINUTE_SKETCH_TTL_S = 3 * 3600
HOUR_SKETCH_TTL_S = 50 * 3600
DAY_SKETCH_TTL_S = DAY_TTL_S
# How far back a range's totals read a tier's sketches (a margin under their TTL).
SKETCH_KEPT_MS = {"m": 2 * 3_600_000, "h": 48 * 3_600_000, "d": 90 * 86_400_000}
SKETCH_TTL_S = {"m": MINUTE_SKETCH_TTL_S, "h": HOUR_SKETCH_TTL_S, "d": DAY_SKETCH_TTL_S}

# Each tier's span size and how long its summaries are kept.
TIERS: dict[str, tuple[int, int]] = {
    "m": (MINUTE_MS, MINUTE_TTL_S),
    "h": (HOUR_MS, HOUR_TTL_S),
    "d": (DAY_MS, DAY_TTL_S),
}
TIER_OF_STEP = {60: "m", 3600: "h", 86400: "d"}


def base(ref: QueueRef) -> str:
    return f"{own_key_prefix(ref.connection)}:hist:{ref.qualified_name}"


def span_key(ref: QueueRef, tier: str, start_ms: int) -> str:
    return f"{base(ref)}:{tier}:{start_ms}"


# The tiers whose queue record is also stored alone, and the letters of its keys.
ALONE = {"h": "hq", "d": "dq"}


def total_key(ref: QueueRef, tier: str, start_ms: int) -> str:
    """The key of the queue's record alone of ``tier``'s span at ``start_ms`` (``ALONE``)."""
    return f"{base(ref)}:{ALONE[tier]}:{start_ms}"


def summary_key(ref: QueueRef, tier: str, start_ms: int) -> str:
    return f"{base(ref)}:{tier}s:{start_ms}"


def span_keys(ref: QueueRef, asks: Iterable[tuple[str, int]]) -> list[str]:
    """:func:`span_key` of each (tier, start), the queue's part built once."""
    head = base(ref)
    return [f"{head}:{tier}:{start}" for tier, start in asks]


def summary_keys(ref: QueueRef, tier: str, starts: Iterable[int]) -> list[str]:
    """:func:`summary_key` of each start, the queue's part built once."""
    head = f"{base(ref)}:{tier}s"
    return [f"{head}:{start}" for start in starts]


def names_key(ref: QueueRef) -> str:
    return f"{base(ref)}:names"


def last_key(ref: QueueRef) -> str:
    return f"{base(ref)}:last"


def start_of(tier: str, at_ms: int) -> int:
    size = TIERS[tier][0]
    return at_ms - at_ms % size


def finer(tier: str) -> str | None:
    return {"h": "m", "d": "h"}.get(tier)
