"""Query-string and body parameters, checked once for the API, the pages and the fast path.

Every number is bounded: user input is answered with a 400 that says what is accepted, never
with a 500 or a Redis error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashboard.duration_input import ACCEPTED, MAX_MS, DurationError, parse_duration_ms
from queues.conf import get_config
from queues.errors import BadParameter

# Job ids and similar names: longer ones cannot be BullMQ's.
MAX_ID = 1024


def whole_number(
    values: Mapping[str, Any],
    name: str,
    default: int | None = None,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """``values[name]`` as an int within ``low``..``high``; missing or empty: ``default``, or
    an error if there is none. Text (query strings, forms) and JSON numbers are accepted; JSON
    booleans and fractions are not."""
    raw = values.get(name)
    if raw is None or raw == "":
        if default is None:
            raise BadParameter(f"{name} is required")
        return default
    number = _as_int(raw)
    if number is None:
        raise BadParameter(f"{name} must be a whole number{_bounds(low, high)}")
    if (low is not None and number < low) or (high is not None and number > high):
        raise BadParameter(f"{name} must be{_bounds(low, high)}")
    return number


def _as_int(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if raw.is_integer() else None
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:  # not digits, or more digits than Python converts
            return None
    return None


def _bounds(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" between {low} and {high}"
    if low is not None:
        return f" of {low} or more"
    if high is not None:
        return f" of at most {high}"
    return ""


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


def milliseconds(values: Mapping[str, Any], name: str) -> int:
    """A duration an API client gives in ms: 0 up to ten years."""
    return whole_number(values, name, low=0, high=MAX_MS)


def text(values: Mapping[str, Any], name: str, default: str = "", *, longest: int = MAX_ID) -> str:
    """``values[name]`` as a string of at most ``longest`` characters."""
    raw = values.get(name)
    if raw is None:
        return default
    if not isinstance(raw, str):
        raise BadParameter(f"{name} must be text")
    if len(raw) > longest:
        raise BadParameter(f"{name} is too long (at most {longest} characters)")
    return raw


def page_params(
    query: Mapping[str, str], default_state: str = "waiting"
) -> tuple[str, int, int, str]:
    """State, page, page size and order; their ranges are checked by the job list itself."""
    state = text(query, "state") or default_state
    page = whole_number(query, "page", 1)
    per_page = whole_number(query, "per_page", int(get_config()["DEFAULT_PAGE_SIZE"]))
    order = text(query, "order") or "desc"
    return state, page, per_page, order


# Page sizes the queue page offers.
PAGE_SIZES = (10, 20, 50, 100, 300)
