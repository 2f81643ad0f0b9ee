"""The GET routes' parameters: job lists, charts, search, failure groups, finding a job, the
list of bulk actions, the overview's list and the audit log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from dashboard.forms.answer import valid
from dashboard.forms.export import ExportFields
from dashboard.forms.fields import (
    MAX_ID,
    ChoiceTextField,
    FlagField,
    TextField,
    WholeNumberField,
)
from dashboard.pages import overview_list
from queues.config.settings import get_config
from queues.errors import BadParameter
from queues.failures import failure_groups
from queues.reads.keys import STATES
from queues.search import scan
from queues.search.query import QuerySyntaxError
from queues.throughput.rates import WINDOWS

# Page sizes the queue page offers.
PAGE_SIZES = (10, 20, 50, 100, 300)
MAX_QUERY = 2000  # characters of a search query
# Ways a search sends its matches: as JSON only, or with the queue page's row HTML.
RENDERINGS = ("", "row")
MAX_LISTED = 200  # bulk actions one list shows
MAX_FILTER = 200  # characters of the overview's name filter


class JobPageForm(forms.Form):
    """State, page, page size and order of a job list; their ranges are checked by the job list
    itself (queues/reads/listing.py), for the pages, the API and the live updates alike."""

    state = TextField()
    page = WholeNumberField(default=1)
    per_page = WholeNumberField()
    order = TextField(default="desc")

    def __init__(self, data: Mapping[str, Any], default_state: str = "waiting") -> None:
        super().__init__(data)
        self.default_state = default_state  # the page's: its first non-empty tab

    def clean_state(self) -> str:
        return str(self.cleaned_data["state"] or self.default_state)

    def clean_per_page(self) -> int:
        per_page = self.cleaned_data["per_page"]
        return int(get_config()["DEFAULT_PAGE_SIZE"]) if per_page is None else int(per_page)


def job_page_params(
    query: Mapping[str, Any], default_state: str = "waiting"
) -> tuple[str, int, int, str]:
    found = valid(JobPageForm(query, default_state)).cleaned_data
    return found["state"], found["page"], found["per_page"], found["order"]


class ThroughputForm(forms.Form):
    window = ChoiceTextField(
        tuple(WINDOWS), f"%(name)s must be one of: {', '.join(WINDOWS)}", default="hour"
    )
    size = TextField(default="large")  # "small": the overview's sparkline


class SearchForm(ExportFields):
    state = ChoiceTextField(tuple(STATES), "Unknown state %(value)r", default="failed")
    q = TextField(longest=MAX_QUERY)
    # Not the form's render(): the form's metaclass moves declared fields into base_fields.
    render = ChoiceTextField(  # type: ignore[assignment]
        RENDERINGS, "%(name)s must be 'row' or left out"
    )
    budget = WholeNumberField(low=1, high=scan.MAX_BUDGET)
    max_matches = WholeNumberField(low=1, high=scan.MAX_BUDGET)

    def clean(self) -> dict[str, Any]:
        found = super().clean() or {}
        if "q" in found:
            try:
                scan.parse_query(found["q"])  # a bad query is a 400 before any line is sent
            except QuerySyntaxError:
                raise  # with where it is wrong, for the answer
            except BadParameter as error:
                raise ValidationError("%(problem)s", params={"problem": str(error)}) from None
        return found


class FailureGroupsForm(forms.Form):
    # Left out: the scan the pages share; given: a scan of the caller's own.
    budget = WholeNumberField(low=1, high=failure_groups.MAX_BUDGET)


class FindForm(forms.Form):
    id = TextField()


class ActionsListForm(forms.Form):
    limit = WholeNumberField(default=50, low=1, high=MAX_LISTED)
    queue = TextField()


class OverviewForm(forms.Form):
    """The overview's filter, grouping, order and page, for the page and ``api/queues/``."""

    q = TextField(longest=MAX_FILTER)
    problems = FlagField()
    group = ChoiceTextField(
        overview_list.GROUPINGS,
        "%(name)s must be one of: head, tail, prefix, connection (or left out)",
    )
    within = TextField(longest=MAX_ID)
    sort = ChoiceTextField(
        (*overview_list.SORTS, *(f"-{key}" for key in overview_list.SORTS)),
        "%(name)s must be name or a state, with - in front for the other way round",
        default="name",
    )
    page = WholeNumberField(default=1, low=1, high=1_000_000)
    per_page = WholeNumberField(default=overview_list.DEFAULT_PER_PAGE, low=1, high=500)
    delimiter = TextField(longest=5)
    # Optional columns: "wait_p95,oldest", or the parameter once per column (checkboxes).
    columns = TextField(longest=100)

    def clean_columns(self) -> tuple[str, ...]:
        given = self.data.getlist("columns") if hasattr(self.data, "getlist") else []
        if not given:
            given = [self.cleaned_data["columns"]]
        wanted = {part for value in given for part in str(value).split(",") if part}
        known = [key for key, _ in overview_list.HISTORY_COLUMNS]
        unknown = sorted(wanted - set(known))
        if unknown:
            raise ValidationError(
                f"%(name)s may hold {', '.join(known)}, not {', '.join(unknown)}", code="invalid"
            )
        return tuple(key for key in known if key in wanted)

    def query(self) -> overview_list.ListQuery:
        found = self.cleaned_data
        return overview_list.ListQuery(
            text=found["q"],
            problems=found["problems"],
            group=found["group"],
            # Given, even empty: only that group's queues.
            within=found["within"] if "within" in self.data else None,
            sort=found["sort"],
            page=found["page"],
            per_page=found["per_page"],
            delimiter=found["delimiter"] or str(get_config()["GROUP_DELIMITER"]),
            columns=found["columns"],
        )


class AuditForm(forms.Form):
    queue = TextField()
    user = TextField()
    page = TextField(default="1")  # the paginator answers a bad number with a valid page


class AuditExportForm(forms.Form):
    queue = TextField()
    user = TextField()
    action = TextField()
    result = ChoiceTextField(("", "ok", "refused", "failed"), "Unknown result %(value)r")
    format = ChoiceTextField(("", "json", "csv"), "%(name)s must be 'csv', 'json' or left out")
