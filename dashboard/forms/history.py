"""The history routes' parameters: the range read (``1h`` ... ``90d``), and on the pages the
order of the job names."""

from __future__ import annotations

from django import forms

from dashboard.forms.fields import ChoiceTextField
from dashboard.history.names import DEFAULT_SORT, SORTS
from queues.history.model import RANGE_STEPS


class HistoryRangeForm(forms.Form):
    range = ChoiceTextField(
        tuple(RANGE_STEPS), f"%(name)s must be one of: {', '.join(RANGE_STEPS)}", default="24h"
    )


class HistoryForm(HistoryRangeForm):
    sort = ChoiceTextField(SORTS, "Unknown order %(value)r", default=DEFAULT_SORT)
