"""Acting on every match of a search in one queue: ``api/queues/<q>/search/<action>/`` with
``?q=&state=``, where the action is retry, promote or remove.

GET counts what the action would act on (the page asks "Retry 37 matching failed jobs?"; an
htmx request gets that question as markup, in the page's language); POST starts it as a
bulk action (202) with the usual checks of every action (credentials, CSRF, read-only)
and an audit row holding the query and the count.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt

from dashboard.auth.guards import View, api_view, json_error, mutation_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.bulk import launch
from dashboard.forms.answer import action_input, valid
from dashboard.forms.search import MatchActionForm, query_data
from dashboard.pages.htmx import htmx
from dashboard.search.match_question import match_question
from queues.actions.result import ActionResult
from queues.search.matches import ACTION_STATES, action_states, matching_ids, question


def _params(request: HttpRequest) -> tuple[str, tuple[str, ...]]:
    data = action_input(request) if request.method == "POST" else dict(request.GET.items())
    data.update(query_data(request.GET, "state"))  # every state named, not only the last
    found = valid(MatchActionForm(data)).cleaned_data
    return found["q"], tuple(found["state"])


async def _count(request: HttpRequest, queue: str, action: str) -> HttpResponse:
    ref = await queue_ref(queue)
    query, asked = _params(request)
    states = action_states(action, asked)
    found = await matching_ids(ref, states, query)
    count = len(found.ids)
    body: dict[str, Any] = {
        "action": action,
        "queue": ref.slug,
        "query": query,
        "states": list(states),
        "count": count,
        "byState": found.by_state,
        "scanned": found.scanned,
        "truncated": found.truncated,
        "question": question(action, states, count),
    }
    if not htmx(request):
        return JsonResponse(body)
    params = urlencode([("q", query), *[("state", s) for s in states]])
    url = reverse("bullpen:search-action", args=[ref.slug, action])
    shown = {**body, "question": match_question(action, states, count), "url": f"{url}?{params}"}
    return render(request, "bullpen/_match_confirm.html", shown)


def _acting(action: str) -> View:
    async def act(request: HttpRequest, queue: str, action: str) -> ActionResult:
        ref = await queue_ref(queue)
        query, asked = _params(request)
        states = action_states(action, asked)
        params = {"query": query, "states": list(states)}
        return await launch.start(request, f"{action}-matches", ref, params)

    return mutation_view(f"{action}-matches")(act)


_COUNT = api_view(_count)
_ACT = {action: _acting(action) for action in ACTION_STATES}


@csrf_exempt  # POSTs go to mutation_view, which makes the checks Django's would
async def search_action(request: HttpRequest, queue: str, action: str) -> HttpResponseBase:
    if action not in _ACT:
        return json_error(f"No action {action!r} on matches (retry, promote or remove)", 404)
    if request.method == "POST":
        return await _ACT[action](request, queue=queue, action=action)
    return await _COUNT(request, queue=queue, action=action)
