"""The results page of a search over every queue: ``search/?q=&state=&queues=``.

The page holds the form and empty results; static/bullpen/search.js streams ``api/search/``
with ``render=html`` into it, grouped by queue, with progress and a Cancel button.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.auth.guards import page_view
from dashboard.auth.viewer import can_act_on, viewer_kind
from dashboard.forms.answer import valid
from dashboard.forms.search import PAGE_MATCHES, SearchAllForm, query_data
from dashboard.pages.switcher import overview_url, queue_index
from dashboard.search.scope import queues_to_search
from queues.reads.keys import STATES

NAMED_QUEUES = 5  # queues whose names match the text, shown above the results


@page_view
async def search_page(request: HttpRequest) -> HttpResponse:
    found = valid(SearchAllForm(query_data(request.GET, "state", "queues"))).cleaned_data
    query = found["q"].strip()
    # Queues named like the text, among those this search may cover.
    allowed = {ref.slug for ref in await queues_to_search(request, [])} if query else set()
    best = (await queue_index()).best(query, len(allowed))[0] if query else []
    named = [match for match in best if match.slug in allowed]
    named, more = named[:NAMED_QUEUES], max(0, len(named) - NAMED_QUEUES)
    kind = await viewer_kind(request.bullpen_principal)  # type: ignore[attr-defined]
    context = {
        "q": query,
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
