"""How much of a flow one read takes: levels below its root, and children shown per parent."""

from __future__ import annotations

from django import forms

from dashboard.forms.fields import WholeNumberField
from queues.reads.flow import DEFAULT_DEPTH, DEFAULT_MAX_CHILDREN, MAX_CHILDREN, MAX_DEPTH


class FlowForm(forms.Form):
    depth = WholeNumberField(default=DEFAULT_DEPTH, low=0, high=MAX_DEPTH)
    max_children = WholeNumberField(default=DEFAULT_MAX_CHILDREN, low=1, high=MAX_CHILDREN)
