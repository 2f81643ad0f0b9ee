"""The header's box: queue and saved-search suggestions as one types, and where Enter leads (a
queue, a job by its id, the overview filtered by part of several queues' names, or a search of
every queue).

Suggestions read discovery's kept queue list (no SCAN per keystroke); both routes go through
``page_view``, so they answer only those who may read the pages.
"""

from __future__ import annotations

from collections.abc import Hashable
from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from dashboard.auth.guards import page_view
from dashboard.auth.queue_access import EVERYTHING, QueueAccess, for_request
from dashboard.forms.answer import valid
from dashboard.forms.fields import TextField
from dashboard.pages.switcher_matching import QueueIndex
from dashboard.saved_searches.store import as_json, matching
from queues.config.queue_options import queue_options
from queues.config.settings import get_config, on_change
from queues.errors import BullpenError
from queues.reads.discovery import Discovered, discovered, known
from queues.reads.find import find_job
from queues.reads.keys import QueueRef

MAX_SUGGESTIONS = 20
MAX_SAVED_SUGGESTIONS = 5


class SwitcherForm(forms.Form):
    q = TextField()

    def clean_q(self) -> str:
        return str(self.cleaned_data["q"]).strip()


# The index of the last queue list read, per audience (those who see the same queues, see
# dashboard/auth/queue_access.py), rebuilt when discovery keeps a new list or the settings (display
# names) change.
_kept: dict[Hashable, tuple[Discovered, object, QueueIndex]] = {}
_MAX_KEPT = 256  # audiences whose index is kept; more are rebuilt as they come


@on_change
def reset() -> None:
    _kept.clear()


async def queue_index(access: QueueAccess = EVERYTHING) -> QueueIndex:
    """The queues ``access`` may view, indexed for the box's matching."""
    found, config = await discovered(), get_config()
    kept = _kept.get(access.audience)
    if kept is not None and kept[0] is found and kept[1] is config:
        return kept[2]
    index = QueueIndex(
        (ref.slug, ref.name, queue_options(ref.slug).get("display_name") or ref.name)
        for ref in access.visible(found.queues, lambda ref: ref.slug)
    )
    if len(_kept) >= _MAX_KEPT:
        _kept.clear()
    _kept[access.audience] = (found, config, index)
    return index


def overview_url(typed: str) -> str:
    url = reverse("bullpen:overview")
    return f"{url}?{urlencode({'q': typed})}" if typed else url


async def _created_since_scan(typed: str, access: QueueAccess) -> str | None:
    """A queue named exactly ``typed`` that the kept list does not have yet."""
    try:
        ref = QueueRef.from_slug(typed)
    except BullpenError:
        return None
    return ref.slug if access.may_view(ref.slug) and await known(ref) else None


@page_view
async def suggestions(request: HttpRequest) -> HttpResponse:
    typed = valid(SwitcherForm(request.GET)).cleaned_data["q"]
    index = await queue_index(await for_request(request))
    matches, total = index.best(typed, MAX_SUGGESTIONS)
    principal = request.bullpen_principal  # type: ignore[attr-defined]
    saved = await matching(request, principal, typed, MAX_SAVED_SUGGESTIONS) if typed else []
    context = {
        "typed": typed,
        "saved": [as_json(row) for row in saved],
        "matches": matches,
        "more": total - len(matches),
        "overview_url": overview_url(typed),
    }
    return render(request, "bullpen/_switcher_matches.html", context)


def search_url(typed: str) -> str:
    return f"{reverse('bullpen:search')}?{urlencode({'q': typed})}"


async def _job_destination(typed: str, access: QueueAccess) -> str | None:
    """A job with exactly this id in a queue ``access`` may view: its page, or the list of
    queues holding one by that id. One in a hidden queue is not there: its page's address
    would name the queue."""
    holding = access.visible(await find_job(typed), lambda ref: ref.slug)
    if len(holding) == 1:
        return reverse("bullpen:job", args=[holding[0].slug, typed])
    if holding:
        return f"{reverse('bullpen:find')}?{urlencode({'id': typed})}"
    return None


@page_view
async def go_to_queue(request: HttpRequest) -> HttpResponse:
    """The box's form: one queue named → its page; a job's exact id → the job; part of several
    queues' names → the overview filtered by it; anything else → a search of every queue."""
    typed = valid(SwitcherForm(request.GET)).cleaned_data["q"]
    if not typed:
        return HttpResponseRedirect(overview_url(""))
    access = await for_request(request)
    index = await queue_index(access)
    slug = index.destination(typed) or await _created_since_scan(typed, access)
    if slug is not None:
        return HttpResponseRedirect(reverse("bullpen:queue", args=[slug]))
    job = await _job_destination(typed, access)
    if job is not None:
        return HttpResponseRedirect(job)
    if index.best(typed, 1)[1]:
        return HttpResponseRedirect(overview_url(typed))
    return HttpResponseRedirect(search_url(typed))
