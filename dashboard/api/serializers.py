"""What the API says about a queue, beyond what Redis holds: display options and read-only."""

from __future__ import annotations

from typing import Any

from dashboard.auth.access import is_read_only
from queues.config.queue_options import queue_options
from queues.reads.counts import QueueSummary


def queue_json(summary: QueueSummary) -> dict[str, Any]:
    slug = summary.ref.slug  # worked out once: the overview makes this for every queue
    options = queue_options(slug)
    return {
        **summary.as_json(slug),
        "readOnly": is_read_only(slug),
        "displayName": options.get("display_name") or summary.ref.name,
        "description": options.get("description", ""),
    }
