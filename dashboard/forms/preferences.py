"""Preferences a browser remembers (a job list's size and order, the tab a queue opens at, how
deep JSON opens, the overview's order, groups and queues per page, the colour scheme), kept in a
cookie the pages read: a page arrives as chosen, in one load (the scheme on ``<html>`` before
the first paint).

The browser writes the cookie (static/bullpen/app.js) as a query string of the names below; the
server trusts none of it: each value passes the same checks as the query string's parameter it
stands for, and one that does not is ignored (never a 400: an old or hand-edited cookie must not
break a page). The query string wins over the cookie, parameter by parameter.
"""

from __future__ import annotations

from urllib.parse import unquote

from django.http import HttpRequest, QueryDict
from django.urls import reverse

from dashboard.forms.reads import OverviewForm
from queues.config.settings import get_config
from queues.errors import BadParameter
from queues.reads.listing import validate_page

COOKIE = "bullpen_prefs"
# Longer than any valid value set; a bigger cookie is not read at all.
MAX_LENGTH = 400
# The cookie's names and the overview's parameters they stand for.
OVERVIEW = {"overview_sort": "sort", "overview_group": "group", "overview_per_page": "per_page"}
# The cookie's names and a queue page's parameters they stand for.
QUEUE = {"tab": "state", "jobs_per_page": "per_page", "jobs_order": "order"}
# How deep JSON trees open: the server renders two levels open.
JSON_DEPTHS = ("1", "2", "3", "5", "all")
DEFAULT_JSON_DEPTH = "2"
# The colour schemes a browser may choose over its system's.
THEMES = ("light", "dark")


def cookie_path() -> str:
    """Bullpen's pages alone carry it: the host site's requests never do."""
    return reverse("bullpen:overview")


def _stored(request: HttpRequest) -> QueryDict:
    raw = request.COOKIES.get(COOKIE, "")
    if not raw or len(raw) > MAX_LENGTH:
        return QueryDict()
    return QueryDict(unquote(raw))


def _overview_values(stored: QueryDict) -> dict[str, str]:
    given = {param: str(stored.get(name, "")) for name, param in OVERVIEW.items()}
    given = {param: value for param, value in given.items() if value}
    form = OverviewForm(given)
    form.is_valid()
    return {param: value for param, value in given.items() if param not in form.errors}


def _queue_values(stored: QueryDict) -> dict[str, str]:
    defaults = {"state": "waiting", "per_page": str(get_config()["DEFAULT_PAGE_SIZE"])}
    defaults["order"] = "desc"
    kept: dict[str, str] = {}
    for name, param in QUEUE.items():
        value = str(stored.get(name, ""))
        if not value:
            continue
        checked = {**defaults, param: value}
        if not checked["per_page"].isdigit() or len(checked["per_page"]) > 6:
            continue
        try:
            validate_page(checked["state"], 1, int(checked["per_page"]), checked["order"])
        except BadParameter:
            continue
        kept[param] = value
    return kept


def _under(query: QueryDict, remembered: dict[str, str]) -> QueryDict:
    """``query`` with the remembered parameters it leaves out."""
    merged = QueryDict(mutable=True)
    for param, value in remembered.items():
        if param not in query:
            merged[param] = value
    for param in query:
        merged.setlist(param, query.getlist(param))
    return merged


def overview_query(request: HttpRequest) -> QueryDict:
    """The overview's parameters: its query string over the remembered order, groups and size."""
    return _under(request.GET, _overview_values(_stored(request)))


def queue_query(request: HttpRequest) -> QueryDict:
    """A queue page's parameters: its query string over the remembered tab, size and order."""
    return _under(request.GET, _queue_values(_stored(request)))


def remembered(request: HttpRequest) -> dict[str, str]:
    """Every valid remembered value under its cookie name (the Preferences dialog shows them)."""
    stored = _stored(request)
    overview = _overview_values(stored)
    found = {name: value for name, param in OVERVIEW.items() if (value := overview.get(param))}
    queue = _queue_values(stored)
    found.update({name: value for name, param in QUEUE.items() if (value := queue.get(param))})
    depth = str(stored.get("json_depth", ""))
    found["json_depth"] = depth if depth in JSON_DEPTHS else DEFAULT_JSON_DEPTH
    found["theme"] = theme(request)
    return found


def theme(request: HttpRequest) -> str:
    """The colour scheme chosen in this browser: light, dark, or "system" (its system's)."""
    chosen = str(_stored(request).get("theme", ""))
    return chosen if chosen in THEMES else "system"
