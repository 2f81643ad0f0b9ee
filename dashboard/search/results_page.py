"""The results page of a search over every queue: ``search/?q=&state=&queues=``.

The page holds the form and empty results; static/bullpen/search.js streams ``api/search/``
with ``render=html`` into it, grouped by queue, with progress and a Cancel button. A query that
cannot be read is said under the box (where and what was expected) and nothing is searched.
Below: links that download the matches (CSV, NDJSON), and the saved searches.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.auth.guards import page_view
from dashboard.auth.viewer import can_act_on, viewer_kind
from dashboard.forms.answer import valid
from dashboard.forms.reads import MAX_QUERY
from dashboard.forms.search import PAGE_MATCHES, SearchScopeForm, query_data
from dashboard.pages.switcher import overview_url, queue_index
from dashboard.saved_searches.store import as_json, visible
from dashboard.search.scope import queues_to_search
from queues.errors import BadParameter
from queues.reads.keys import STATES
from queues.search.scan import parse_query

NAMED_QUEUES = 5  # queues whose names match the text, shown above the results


def _checked(query: str) -> str:
    """Why ``query`` cannot be read ("" when it can): shown under the box."""
    try:
        parse_query(query)
    except BadParameter as error:
        return str(error)
    return ""


@page_view
async def search_page(request: HttpRequest) -> HttpResponse:
    data = query_data(request.GET, "state", "queues")
    # One character past the most a query may have is enough to say it is too long.
    query = str(data.pop("q", "") or "").strip()[: MAX_QUERY + 1]
    found = valid(SearchScopeForm(data)).cleaned_data
    query_error = _checked(query) if query else ""
    readable = bool(query) and not query_error
    # Queues named like the text, among those this search may cover.
    allowed = {ref.slug for ref in await queues_to_search(request, [])} if readable else set()
    best = (await queue_index()).best(query, len(allowed))[0] if readable else []
    named = [match for match in best if match.slug in allowed]
    named, more = named[:NAMED_QUEUES], max(0, len(named) - NAMED_QUEUES)
    kind = await viewer_kind(request.bullpen_principal)  # type: ignore[attr-defined]
    principal = request.bullpen_principal  # type: ignore[attr-defined]
    export = [("q", query), *(("state", s) for s in found["state"])]
    if found["queues"]:
        export.append(("queues", ",".join(found["queues"])))
    context = {
        "q": query,
        "query_error": query_error,
        "export_query": urlencode(export) if readable else "",
        "saved": [as_json(row) for row in await visible(request, principal)],
        "states": found["state"] or list(STATES),
        "all_states": list(STATES),
        "queues": ", ".join(found["queues"]),
        "named": named,
        "named_more": more,
        "overview_url": overview_url(query),
        "max_matches": PAGE_MATCHES,
        "can_act": can_act_on(kind, ""),
    }
    return render(request, "bullpen/search.html", context)
