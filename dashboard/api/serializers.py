"""What the API says about a queue, beyond what Redis holds: display options and read-only."""

from __future__ import annotations

from typing import Any

from dashboard.auth.access import is_read_only
from queues.config.queue_options import queue_options
from queues.config.settings import get_config, on_change
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef

# Each queue's JSON as last made, with the summary and settings it was made from: the live
# reader hands a view the same summary while a queue's counts stay, so a view of 50,000 queues
# copies what it made before instead of making it again. Bounded: forgotten whole when full.
_made: dict[QueueRef, tuple[QueueSummary, object, dict[str, Any]]] = {}
_MADE_KEPT = 100_000


@on_change
def _forget_made() -> None:
    _made.clear()  # the queues' options changed


def queue_json(summary: QueueSummary) -> dict[str, Any]:
    """The queue as the API describes it: a dict of its own, which the caller may add to (its
    values are shared with the summary and are not to be changed)."""
    config = get_config()
    kept = _made.get(summary.ref)
    if kept is not None and kept[0] is summary and kept[1] is config:
        return dict(kept[2])
    slug = summary.ref.slug  # worked out once: the overview makes this for every queue
    options = queue_options(slug)
    made = {
        **summary.as_json(slug),
        "readOnly": is_read_only(slug),
        "displayName": options.get("display_name") or summary.ref.name,
        "description": options.get("description", ""),
    }
    if len(_made) >= _MADE_KEPT:
        _made.clear()
    _made[summary.ref] = (summary, config, made)
    return dict(made)
