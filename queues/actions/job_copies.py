"""The options a job added in another's likeness keeps (a duplicate, a replayed dead letter, a
scheduler's job run now): how it runs and is kept, never its id, schedule or parent links."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KEPT_OPTS = (
    "attempts",
    "backoff",
    "priority",
    "lifo",
    "removeOnComplete",
    "removeOnFail",
    "keepLogs",
    "stackTraceLimit",
    "sizeLimit",
)


def kept_opts(given: Mapping[str, Any] | None, *, with_delay: bool = False) -> dict[str, Any]:
    """``given``'s options a copy keeps; ``with_delay`` also keeps its delay (a duplicate runs
    as the original would)."""
    if not isinstance(given, Mapping):
        return {}
    names = (*KEPT_OPTS, "delay") if with_delay else KEPT_OPTS
    return {name: given[name] for name in names if name in given}
