"""Query-string parameters of job lists, checked once for both the API and the pages."""

from __future__ import annotations

from django.http import HttpRequest

from queues.conf import get_config
from queues.errors import BadParameter


def _int(request: HttpRequest, name: str, default: int) -> int:
    raw = request.GET.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        raise BadParameter(f"{name} must be a whole number") from None


def page_params(request: HttpRequest, default_state: str = "waiting") -> tuple[str, int, int, str]:
    state = request.GET.get("state") or default_state
    page = _int(request, "page", 1)
    per_page = _int(request, "per_page", int(get_config()["DEFAULT_PAGE_SIZE"]))
    order = request.GET.get("order") or "desc"
    return state, page, per_page, order
