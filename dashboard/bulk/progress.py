"""A bulk action's progress as the pages show it: the bar (``_bulk_progress.html``) and the
sentence a page's toast says when it starts, worded in the language that is active, with the
action's name as its buttons say it and counts grouped as the language writes them. The same
bar is a page's, a status answer's and a live message's (dashboard/live/render.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils.formats import number_format
from django.utils.translation import gettext_lazy, ngettext, pgettext_lazy

from queues.bulk.record import FINISHED

TEMPLATE = "bullpen/_bulk_progress.html"

# Each kind of bulk action (queues/bulk/kinds.py) by the words of the button that starts it.
_NAMES: dict[str, Any] = {
    "retry-all": pgettext_lazy("bulk action", "Retry all"),
    "promote-all": gettext_lazy("Promote all"),
    "clean": gettext_lazy("Clean"),
    "retry-group": gettext_lazy("Retry group"),
    "remove-group": gettext_lazy("Remove group"),
    "retry-matches": pgettext_lazy("bulk action", "Retry matches"),
    "promote-matches": pgettext_lazy("bulk action", "Promote matches"),
    "remove-matches": pgettext_lazy("bulk action", "Remove matches"),
}


def action_name(kind: str) -> str:
    """The action's name in the active language (a kind without one: as the API names it)."""
    name = _NAMES.get(kind)
    return kind if name is None else str(name)


@dataclass(frozen=True)
class Bar:
    """What the bar shows of one action: ``done`` of ``total`` jobs, or once it ended its
    ``text`` (what it did, as the page confirms it)."""

    id: str
    queue: str
    kind: str
    state: str
    done: int
    total: int
    text: str = ""

    @property
    def over(self) -> bool:
        return self.state in FINISHED

    @property
    def name(self) -> str:
        return action_name(self.kind)

    @property
    def whole(self) -> int:
        # A clean or a retry may move more than were there when it was asked for.
        return max(self.total, self.done)

    @property
    def percent(self) -> int:
        if self.whole:
            return round(100 * self.done / self.whole)
        return 100 if self.over else 0


def bar_html(bar: Bar, *, can_act: bool) -> str:
    """The bar, with its Cancel button for those who may act while the action runs."""
    return render_to_string(TEMPLATE, {"bar": bar, "can_act": can_act}).strip()


def started_text(kind: str, total: int) -> str:
    """What the page that asked says at once: "Retry all: started, 5 jobs"."""
    return ngettext(
        "%(action)s: started, %(count)s job", "%(action)s: started, %(count)s jobs", total
    ) % {"action": action_name(kind), "count": number_format(total, force_grouping=True)}
