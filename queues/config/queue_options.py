"""One queue's ``QUEUE_OPTIONS`` entry (display name, description, read-only, alerts)."""

from __future__ import annotations

from typing import Any

from queues.config.settings import get_config
from queues.redis import connections


def queue_options(slug: str) -> dict[str, Any]:
    """The entry of the queue with this slug. With several connections an entry under the
    name without its connection (``mail`` for ``mail@eu``) applies on every connection where
    the queue has no entry of its own: adding a connection must not drop a queue's read-only
    setting."""
    given = get_config().get("QUEUE_OPTIONS") or {}
    found = given.get(slug)
    if found is None and connections.several():
        found = given.get(connections.split_slug(slug)[1])
    return dict(found) if isinstance(found, dict) else {}
