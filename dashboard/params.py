"""Page sizes the queue page offers, for the live updates; request input is read by the forms
of dashboard/forms/."""

from __future__ import annotations

from dashboard.forms.reads import PAGE_SIZES

__all__ = ["PAGE_SIZES"]
