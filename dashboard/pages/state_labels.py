"""The words a person reads for a job state. The state keys themselves ("waiting", "failed")
stay English everywhere a machine reads them: URLs, data attributes, API JSON, CSS classes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.utils.formats import number_format
from django.utils.functional import Promise
from django.utils.translation import pgettext, pgettext_lazy

# "job state" context: translators see these are states, not verbs or list names.
STATE_LABELS: dict[str, Promise] = {
    "waiting": pgettext_lazy("job state", "waiting"),
    "active": pgettext_lazy("job state", "active"),
    "prioritized": pgettext_lazy("job state", "prioritized"),
    "delayed": pgettext_lazy("job state", "delayed"),
    "waiting-children": pgettext_lazy("job state", "waiting-children"),
    "paused": pgettext_lazy("job state", "paused"),
    "completed": pgettext_lazy("job state", "completed"),
    "failed": pgettext_lazy("job state", "failed"),
    "removed": pgettext_lazy("job state", "removed"),
    "unknown": pgettext_lazy("job state", "unknown"),
}


def state_label(state: str) -> str:
    """The state in the page's language; a state Bullpen does not know stays as it is."""
    label = STATE_LABELS.get(state)
    return state if label is None else str(label)


def state_list(states: Sequence[str], conjunction: str) -> str:
    """Several states in the page's language, joined by "and" or "or" as the catalog joins
    two of them: "failed or completed", "waiting or delayed or completed"."""
    joined = ""
    for state in states:
        label = state_label(state)
        if not joined:
            joined = label
        elif conjunction == "and":
            joined = pgettext("list of job states", "%(items)s and %(last)s") % {
                "items": joined,
                "last": label,
            }
        else:
            joined = pgettext("list of job states", "%(items)s or %(last)s") % {
                "items": joined,
                "last": label,
            }
    return joined


def state_counts(by_state: Iterable[tuple[str, int]]) -> str:
    """How many jobs of each state, grouped as the language writes numbers: "3 failed, 1
    completed"."""
    return ", ".join(
        pgettext("count of jobs in a state", "%(n)s %(state)s")
        % {"n": number_format(n, force_grouping=True), "state": state_label(state)}
        for state, n in by_state
    )
