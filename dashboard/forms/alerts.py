"""Silencing an alert: for how many minutes (1 to a week), and which rule (of the URL); and the
durations the queue page offers."""

from __future__ import annotations

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy, pgettext_lazy

from dashboard.forms.fields import WholeNumberField
from queues.alerts.silences import MOST_MINUTES
from queues.alerts.thresholds import DEFAULTS


class RuleForm(forms.Form):
    rule = forms.ChoiceField(choices=[(rule, rule) for rule in DEFAULTS])


class SilenceForm(RuleForm):
    minutes = WholeNumberField(low=1, high=MOST_MINUTES, required=True)


def _span(amount: int, unit: str) -> object:
    return format_lazy("{} {}", amount, pgettext_lazy("time unit", unit))


# What the page's "Silence…" offers (in minutes): a short look, an hour, a shift, a day, a week.
SILENCE_CHOICES = (
    (15, _span(15, "min")),
    (60, _span(1, "h")),
    (240, _span(4, "h")),
    (1440, _span(24, "h")),
    (MOST_MINUTES, _span(7, "d")),
)


class SilenceChoiceForm(forms.Form):
    """The page's menu of durations; the action itself checks its input with SilenceForm."""

    minutes = forms.TypedChoiceField(
        choices=SILENCE_CHOICES, coerce=int, initial=60, label=gettext_lazy("for")
    )
