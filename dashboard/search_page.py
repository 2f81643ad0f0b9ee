"""The results page of a search over every queue: ``search/?q=&state=&queues=``.

The page holds the form and empty results; static/bullpen/search.js streams ``api/search/``
with ``render=html`` into it, grouped by queue, with progress and a Cancel button.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.forms.answer import valid
from dashboard.forms.search import PAGE_MATCHES, SearchAllForm, query_data
from dashboard.guards import page_view
from dashboard.switcher import overview_url, queue_index
from dashboard.viewer import can_act_on, viewer_kind
from queues.keys import STATES

NAMED_QUEUES = 5  # queues whose names match the text, shown above the results


@page_view
async def search_page(request: HttpRequest) -> HttpResponse:
    found = valid(SearchAllForm(query_data(request.GET, "state", "queues"))).cleaned_data
    query = found["q"].strip()
    named, total = (await queue_index()).best(query, NAMED_QUEUES) if query else ([], 0)
    kind = await viewer_kind(request.bullpen_principal)  # type: ignore[attr-defined]
    context = {
        "q": query,
        "states": found["state"] or list(STATES),
        "all_states": list(STATES),
        "queues": ", ".join(found["queues"]),
        "named": named,
        "named_more": total - len(named),
        "overview_url": overview_url(query),
        "max_matches": PAGE_MATCHES,
        "can_act": can_act_on(kind, ""),
    }
    return render(request, "bullpen/search.html", context)
