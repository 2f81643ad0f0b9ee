"""The table of job names: its columns, their order, and the query string of each heading.

Sorted on the server, as the overview's columns are: a heading is a link to the same page
ordered by it (the other way round when it is the order already). A name without a measure
(no job of it finished, no percentile) goes last whichever way the column is ordered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy, pgettext_lazy

from queues.history.model import NameRow

# The table's sortable columns, in the order shown, with their headings.
COLUMNS: tuple[tuple[str, Promise], ...] = (
    ("name", gettext_lazy("Job name")),
    ("runs", pgettext_lazy("run count", "Runs")),
    ("failed", gettext_lazy("Failed")),
    ("failure_rate", gettext_lazy("Failure rate")),
    ("wait_p50", gettext_lazy("Wait p50")),
    ("wait_p95", gettext_lazy("Wait p95")),
    ("wait_p99", gettext_lazy("Wait p99")),
    ("run_p50", gettext_lazy("Run p50")),
    ("run_p95", gettext_lazy("Run p95")),
    ("run_p99", gettext_lazy("Run p99")),
)
SORT_KEYS = tuple(key for key, _ in COLUMNS)
# Every value ``sort`` may take: a column, "-" in front for the other way round.
SORTS = (*SORT_KEYS, *(f"-{key}" for key in SORT_KEYS))
DEFAULT_SORT = "-runs"


def _measure(key: str) -> Callable[[NameRow], float | None]:
    if key == "runs":
        return lambda row: row.completed + row.failed
    if key == "failed":
        return lambda row: row.failed
    if key == "failure_rate":
        return lambda row: row.failure_rate
    kind, q = key.split("_")

    def percentile(row: NameRow) -> float | None:
        found: float | None = getattr(row.wait_ms if kind == "wait" else row.run_ms, q)
        return found

    return percentile


def sorted_rows(rows: list[NameRow], sort: str) -> list[NameRow]:
    """``rows`` in the order ``sort`` names; ties (and names without a measure) by name."""
    key = sort.lstrip("-")
    descending = sort.startswith("-")
    by_name = sorted(rows, key=lambda row: row.name)
    if key == "name":
        return list(reversed(by_name)) if descending else by_name
    measure = _measure(key)
    measured = [row for row in by_name if measure(row) is not None]
    missing = [row for row in by_name if measure(row) is None]
    # A stable sort, also with reverse=True: equal rows stay by name, A first.
    measured.sort(key=lambda row: measure(row) or 0.0, reverse=descending)
    return measured + missing


@dataclass(frozen=True)
class Heading:
    key: str
    label: str
    params: str  # the query string this heading links to
    current: bool
    descending: bool


def headings(sort: str, range_name: str) -> list[Heading]:
    """Each column's heading: numbers order from the most, names from A; a click on the
    current order turns it round."""
    found = []
    for key, label in COLUMNS:
        current = sort.lstrip("-") == key
        if current:
            chosen = key if sort.startswith("-") else f"-{key}"
        else:
            chosen = key if key == "name" else f"-{key}"
        found.append(
            Heading(
                key=key,
                label=str(label),
                params=urlencode({"range": range_name, "sort": chosen}),
                current=current,
                descending=sort.startswith("-"),
            )
        )
    return found
