"""Which counts an event can change, so that the live follower re-reads only those."""

from __future__ import annotations

from queues.keys import STATES

ALL = frozenset(STATES)
# Events that may also change the queue's meta hash (paused flag): a full read.
FULL_READ = {"paused", "resumed", "drained", "cleaned", "removed"}

_EFFECTS: dict[str, frozenset[str]] = {
    "added": frozenset({"waiting", "prioritized", "delayed", "paused"}),
    "waiting": frozenset(
        {
            "waiting",
            "prioritized",
            "delayed",
            "paused",
            "active",
            "completed",
            "failed",
            "waiting-children",
        }
    ),
    "active": frozenset({"waiting", "prioritized", "active", "paused"}),
    "completed": frozenset({"active", "completed", "waiting-children"}),
    "failed": frozenset({"active", "failed", "delayed", "waiting", "waiting-children"}),
    "delayed": frozenset({"delayed", "active", "waiting", "prioritized"}),
    "prioritized": frozenset({"prioritized", "waiting", "delayed", "active"}),
    "waiting-children": frozenset({"waiting-children", "active"}),
    "stalled": frozenset({"active", "waiting", "prioritized", "failed"}),
    "retries-exhausted": frozenset({"failed", "active"}),
    "progress": frozenset(),
    "duplicated": frozenset(),
    "deduplicated": frozenset(),
    "debounced": frozenset(),
}


def states_changed_by(event: str) -> frozenset[str]:
    """States whose counts may have moved; unknown events: all of them."""
    return _EFFECTS.get(event, ALL)
