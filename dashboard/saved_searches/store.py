"""Saved searches as the API and the pages show them: the rows a user may see, and the link
that runs each (``search/?q=&state=&queues=``, a link anyone may share).

Once ``QUEUE_ACCESS`` is set, each user sees only the searches they saved (another's may name
queues hidden from them); a superuser sees all. Running a search covers only the queues its
reader may view, whoever saved it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse

from dashboard.auth.principal import Principal
from dashboard.auth.queue_access import for_request
from dashboard.models import SavedSearch

MAX_SAVED = 1000  # saved searches on one site
SHOWN = 200  # the most a list shows


def search_url(q: str, state: list[str], queues: list[str]) -> str:
    params: list[tuple[str, str]] = [("q", q)]
    params += [("state", s) for s in state]
    if queues:
        params.append(("queues", ",".join(queues)))
    return reverse("bullpen:search") + "?" + urlencode(params)


def as_json(saved: SavedSearch) -> dict[str, Any]:
    return {
        "id": saved.pk,
        "name": saved.name,
        "q": saved.q,
        "state": list(saved.state),
        "queues": list(saved.queues),
        "owner": saved.owner,
        "url": search_url(saved.q, list(saved.state), list(saved.queues)),
    }


async def _rows(request: HttpRequest, principal: Principal) -> QuerySet[SavedSearch]:
    rows = SavedSearch.objects.all()
    superuser = bool(principal.user and getattr(principal.user, "is_superuser", False))
    if (await for_request(request)).restricted and not superuser:
        rows = rows.filter(owner=principal.username)
    return rows


async def visible(request: HttpRequest, principal: Principal) -> list[SavedSearch]:
    return [row async for row in (await _rows(request, principal))[:SHOWN]]


async def matching(
    request: HttpRequest, principal: Principal, typed: str, most: int
) -> list[SavedSearch]:
    """Saved searches whose name or query holds ``typed`` (the header box's suggestions)."""
    rows = (await _rows(request, principal)).filter(
        Q(name__icontains=typed) | Q(q__icontains=typed)
    )
    return [row async for row in rows[:most]]
