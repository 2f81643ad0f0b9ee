"""Query-string parameters of job lists, checked once for both the API and the pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashboard.duration_input import ACCEPTED, DurationError, parse_duration_ms
from queues.conf import get_config
from queues.errors import BadParameter


def whole_number(values: Mapping[str, Any], name: str, default: int | None = None) -> int:
    """``values[name]`` as an int; missing or empty: ``default``, or an error if there is none."""
    raw = values.get(name)
    if raw is None or raw == "":
        if default is None:
            raise BadParameter(f"{name} is required")
        return default
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise BadParameter(f"{name} must be a whole number") from None


def duration_ms(values: Mapping[str, Any], name: str, default: str) -> int:
    """``values[name]`` as typed by a person ("30 min", "1h30m"; a bare number is ms)."""
    raw = values.get(name)
    text = default if raw is None or raw == "" else raw
    if not isinstance(text, str | int) or isinstance(text, bool):
        raise BadParameter(f"{name} must be {ACCEPTED}")
    try:
        return parse_duration_ms(str(text))
    except DurationError as error:
        raise BadParameter(f"{name}: {error}") from None


def page_params(
    query: Mapping[str, str], default_state: str = "waiting"
) -> tuple[str, int, int, str]:
    state = query.get("state") or default_state
    page = whole_number(query, "page", 1)
    per_page = whole_number(query, "per_page", int(get_config()["DEFAULT_PAGE_SIZE"]))
    order = query.get("order") or "desc"
    return state, page, per_page, order


# Page sizes the queue page offers.
PAGE_SIZES = (10, 20, 50, 100, 300)
