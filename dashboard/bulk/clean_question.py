"""What the page asks before a clean, in the page's language, with what the form says now:
"Remove up to 1,000 completed jobs older than 1 h? 37 completed jobs are older than 1 h now."

``q/<queue>/clean/`` (GET, from the clean form) answers the question as markup with the button
that starts the clean with exactly those values; the clean itself is the usual action (POST).
A value the form refuses answers JSON ``{"error"}``, which the page shows.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext

from dashboard.auth.guards import api_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.forms.actions import CleanForm
from dashboard.forms.answer import valid
from dashboard.pages.state_labels import state_label
from queues.bulk.record import now_ms
from queues.bulk.set_kinds import CLEANABLE, older_than
from queues.errors import BadParameter

# The units a grace is said in, largest first (symbols, the same in every language shown).
_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000), ("ms", 1))


def grace_text(ms: int) -> str:
    """A grace as a person would type it: "1 h", "1 h 30 min", "90 ms"."""
    if ms <= 0:
        return "0 s"
    parts = []
    for unit, size in _UNITS:
        if ms >= size:
            parts.append(f"{ms // size} {unit}")
            ms %= size
    return " ".join(parts[:2])


def clean_question(state: str, grace_ms: int, limit: int, older: int | None) -> str:
    values = {
        "state": state_label(state),
        "grace": grace_text(grace_ms),
        "limit": number_format(limit, force_grouping=True),
    }
    if limit:
        asked = ngettext(
            "Remove up to %(limit)s %(state)s job older than %(grace)s?",
            "Remove up to %(limit)s %(state)s jobs older than %(grace)s?",
            limit,
        )
    else:
        asked = gettext("Remove every %(state)s job older than %(grace)s?")
    text = asked % values
    if older is not None:
        now = ngettext(
            "%(n)s %(state)s job is older than %(grace)s now.",
            "%(n)s %(state)s jobs are older than %(grace)s now.",
            older,
        ) % {**values, "n": number_format(older, force_grouping=True)}
        text = f"{text} {now}"
    return f"{text} {gettext('This cannot be undone.')}"


@api_view
async def clean_confirm(request: HttpRequest, queue: str) -> HttpResponse:
    ref = await queue_ref(queue)
    found = valid(CleanForm(request.GET)).cleaned_data
    state, grace_ms, limit = found["state"], int(found["grace"]), int(found["limit"])
    if state not in CLEANABLE:
        raise BadParameter(f"state must be one of: {', '.join(CLEANABLE)}")
    older = await older_than(ref, state, grace_ms, now_ms())
    query = urlencode({"state": state, "grace_ms": grace_ms, "limit": limit})
    return render(
        request,
        "bullpen/_clean_confirm.html",
        {
            "question": clean_question(state, grace_ms, limit, older),
            "url": f"{reverse('bullpen:clean', args=[ref.slug])}?{query}",
            "nothing": older == 0,
        },
    )
