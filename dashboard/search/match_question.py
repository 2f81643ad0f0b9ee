"""What the page asks before acting on a search's matches, in the page's language: "Retry 37
matching failed jobs?". The JSON answer keeps the English question queues/ writes."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.formats import number_format
from django.utils.translation import ngettext

from dashboard.pages.state_labels import state_list
from queues.search.matches import ACTION_STATES


def match_question(action: str, states: Sequence[str], count: int) -> str:
    values = {"n": number_format(count, force_grouping=True), "states": state_list(states, "or")}
    # Whole sentences, so that each language can place the count and the states.
    if action == "retry":
        text = ngettext(
            "Retry %(n)s matching %(states)s job?", "Retry %(n)s matching %(states)s jobs?", count
        )
    elif action == "promote":
        text = ngettext(
            "Promote %(n)s matching %(states)s job?",
            "Promote %(n)s matching %(states)s jobs?",
            count,
        )
    elif tuple(states) == ACTION_STATES["remove"]:
        text = ngettext(
            "Remove %(n)s matching job? This cannot be undone.",
            "Remove %(n)s matching jobs? This cannot be undone.",
            count,
        )
    else:
        text = ngettext(
            "Remove %(n)s matching %(states)s job? This cannot be undone.",
            "Remove %(n)s matching %(states)s jobs? This cannot be undone.",
            count,
        )
    return text % values
