"""Parameters of the search over every queue (``api/search/``, the ``search/`` page) and of the
actions on a search's matches (``api/queues/<q>/search/<action>/``).

``state`` and ``queues`` may be repeated or given as a comma list; left out, a search covers
every state of every queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import QueryDict

from dashboard.forms.export import ExportFields
from dashboard.forms.fields import MAX_ID, SharedField, TextField, WholeNumberField
from dashboard.forms.reads import MAX_QUERY
from queues.errors import BadParameter
from queues.reads.keys import STATES
from queues.search import scan
from queues.search.query import QuerySyntaxError

MAX_PATTERNS = 100  # queue names or globs one search names
# Matches the results page asks for: a page stays usable with this many rows.
PAGE_MATCHES = 1000


class ListField(SharedField):
    """Texts, repeated or with commas between them; each at most ``MAX_ID`` characters."""

    def __init__(self, *, most: int, choices: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.most, self.choices = most, choices

    def to_python(self, value: Any) -> list[str]:
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, str) or v is None for v in values):
            raise ValidationError("%(name)s must be text", code="invalid")
        parts = [p.strip() for v in values if v for p in v.split(",")]
        parts = list(dict.fromkeys(p for p in parts if p))
        if any(len(p) > MAX_ID for p in parts):
            raise ValidationError(f"%(name)s: at most {MAX_ID} characters each", code="long")
        if len(parts) > self.most:
            raise ValidationError(f"%(name)s: at most {self.most} of them", code="max_items")
        unknown = [p for p in parts if self.choices and p not in self.choices]
        if unknown:
            raise ValidationError(
                "%(name)s: unknown %(value)r (one of: " + ", ".join(self.choices) + ")",
                code="invalid_choice",
                params={"value": unknown[0]},
            )
        return parts


def query_data(query: QueryDict | Mapping[str, Any], *many: str) -> dict[str, Any]:
    """A request's parameters for a form, the ``many`` ones as lists of every value given."""
    data: dict[str, Any] = dict(query.items())
    if isinstance(query, QueryDict):
        for name in many:
            if name in query:
                data[name] = query.getlist(name)
    return data


def _checked_query(found: dict[str, Any]) -> None:
    if "q" in found:
        try:
            scan.parse_query(found["q"])  # a bad query is a 400 before any line is sent
        except QuerySyntaxError:
            raise  # with where it is wrong, for the answer
        except BadParameter as error:
            raise ValidationError("%(problem)s", params={"problem": str(error)}) from None


class SearchAllForm(ExportFields):
    q = TextField(longest=MAX_QUERY)
    state = ListField(most=len(STATES), choices=tuple(STATES))
    queues = ListField(most=MAX_PATTERNS)
    # Not the form's render(): the form's metaclass moves declared fields into base_fields.
    render = TextField()  # type: ignore[assignment]
    budget = WholeNumberField(low=1, high=scan.MAX_BUDGET)
    max_matches = WholeNumberField(low=1, high=scan.MAX_BUDGET)

    def clean_render(self) -> bool:
        if self.cleaned_data["render"] not in ("", "html"):
            raise ValidationError("%(name)s must be 'html' or left out")
        return bool(self.cleaned_data["render"])

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        _checked_query(found)
        return found


class SearchScopeForm(forms.Form):
    """The results page's states and queues (its query is read apart: a query that cannot be
    read is said on the page, not answered with an error page)."""

    state = ListField(most=len(STATES), choices=tuple(STATES))
    queues = ListField(most=MAX_PATTERNS)


class MatchActionForm(forms.Form):
    q = TextField(longest=MAX_QUERY, required=True)
    state = ListField(most=len(STATES), choices=tuple(STATES))

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        _checked_query(found)
        return found


class SavedSearchForm(forms.Form):
    name = TextField(longest=100, required=True)
    q = TextField(longest=MAX_QUERY, required=True)
    state = ListField(most=len(STATES), choices=tuple(STATES))
    queues = ListField(most=MAX_PATTERNS)

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        _checked_query(found)
        return found
