"""``api/saved-searches/``: GET lists the saved searches this user may see
(``{"searches": [{"id", "name", "q", "state", "queues", "owner", "url"}]}``); POST (``name``,
``q``, ``state``, ``queues``) saves one and answers its ``id`` and ``url``;
``api/saved-searches/<id>/delete/`` (POST) deletes one, its owner's or, for a superuser, any.

Saving and deleting are actions: audited, refused under read-only mode, for operators only.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase

from dashboard.auth.guards import api_view
from dashboard.auth.mutation_steps import mutation_view
from dashboard.auth.principal import from_request
from dashboard.forms.answer import action_input, valid
from dashboard.forms.search import SavedSearchForm
from dashboard.models import SavedSearch
from dashboard.saved_searches.store import MAX_SAVED, as_json, search_url, visible
from queues.actions.result import ActionResult
from queues.errors import Conflict, QueueNotFound
from queues.reads.keys import STATES


@api_view
async def _listed(request: HttpRequest) -> JsonResponse:
    principal = await from_request(request)
    return JsonResponse({"searches": [as_json(row) for row in await visible(request, principal)]})


@mutation_view("save-search", queue_scoped=False)
async def _save(request: HttpRequest) -> ActionResult:
    given = action_input(request)
    if request.content_type != "application/json" and "state" in request.POST:
        given["state"] = request.POST.getlist("state")  # the page's ticked boxes
    found = valid(SavedSearchForm(given)).cleaned_data
    # Every state is what a search covers when none is named: kept as none.
    states = [] if set(found["state"]) == set(STATES) else found["state"]
    principal = await from_request(request)
    if await SavedSearch.objects.acount() >= MAX_SAVED:
        raise Conflict(f"At most {MAX_SAVED:,} saved searches: delete some first")
    saved = await SavedSearch.objects.acreate(
        name=found["name"],
        q=found["q"],
        state=states,
        queues=found["queues"],
        owner=principal.username[:150],
    )
    url = search_url(saved.q, states, found["queues"])
    return ActionResult("save-search", detail={"id": saved.pk, "url": url, "name": saved.name})


async def saved_searches(request: HttpRequest) -> HttpResponseBase:
    """One URL, two guards: a POST is an action, anything else a read."""
    if request.method == "POST":
        return await _save(request)
    return await _listed(request)


@mutation_view("delete-saved-search", queue_scoped=False)
async def delete(request: HttpRequest, search_id: int) -> ActionResult:
    principal = await from_request(request)
    saved = await SavedSearch.objects.filter(pk=search_id).afirst()
    user: Any = principal.user
    mine = saved is not None and (
        saved.owner == principal.username or bool(user and user.is_superuser)
    )
    if saved is None or not mine:
        # Another's search is answered as a missing one: its id tells nothing.
        raise QueueNotFound(f"No saved search {search_id} of yours")
    await saved.adelete()
    return ActionResult("delete-saved-search", detail={"id": search_id, "name": saved.name})
