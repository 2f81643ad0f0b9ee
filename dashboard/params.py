"""Query-string parameters of job lists, checked once for both the API and the pages."""

from __future__ import annotations

from collections.abc import Mapping

from queues.conf import get_config
from queues.errors import BadParameter


def _int(query: Mapping[str, str], name: str, default: int) -> int:
    raw = query.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise BadParameter(f"{name} must be a whole number") from None


def page_params(
    query: Mapping[str, str], default_state: str = "waiting"
) -> tuple[str, int, int, str]:
    state = query.get("state") or default_state
    page = _int(query, "page", 1)
    per_page = _int(query, "per_page", int(get_config()["DEFAULT_PAGE_SIZE"]))
    order = query.get("order") or "desc"
    return state, page, per_page, order
