"""The words a person reads for a job state. The state keys themselves ("waiting", "failed")
stay English everywhere a machine reads them: URLs, data attributes, API JSON, CSS classes."""

from __future__ import annotations

from django.utils.functional import Promise
from django.utils.translation import pgettext_lazy

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
