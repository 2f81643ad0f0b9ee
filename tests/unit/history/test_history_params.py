"""The history pages' parameters: the range and the job names' order, and the overview's
optional history columns, read by Django forms and written back into links."""

from __future__ import annotations

import pytest
from django.http import QueryDict

from dashboard.forms.answer import valid
from dashboard.forms.history import HistoryForm
from dashboard.forms.reads import OverviewForm
from dashboard.history.names import headings, sorted_rows
from queues.errors import BadParameter
from queues.history.model import NameRow, Percentiles


def test_the_range_and_order_have_defaults_and_refuse_the_unknown():
    found = valid(HistoryForm(QueryDict(""))).cleaned_data
    assert (found["range"], found["sort"]) == ("24h", "-runs")
    assert valid(HistoryForm(QueryDict("range=90d&sort=wait_p95"))).cleaned_data["range"] == "90d"
    with pytest.raises(BadParameter, match="range must be one of: 1h, 6h, 24h, 7d, 30d, 90d"):
        valid(HistoryForm(QueryDict("range=2y")))
    with pytest.raises(BadParameter, match="Unknown order"):
        valid(HistoryForm(QueryDict("sort=-data")))


def test_overview_columns_from_a_list_or_checkboxes_in_their_own_order():
    query = valid(OverviewForm(QueryDict("columns=oldest,wait_p95"))).query()
    assert query.columns == ("wait_p95", "oldest")
    assert "columns=wait_p95%2Coldest" in query.params(page=2)
    checked = valid(OverviewForm(QueryDict("columns=oldest&columns=wait_p95"))).query()
    assert checked.columns == ("wait_p95", "oldest")
    assert valid(OverviewForm(QueryDict(""))).query().params() == ""
    with pytest.raises(BadParameter, match="columns may hold wait_p95, oldest, not x"):
        valid(OverviewForm(QueryDict("columns=x")))


def row(name: str, completed: int, failed: int = 0, wait_p95: float | None = None) -> NameRow:
    rate = failed / (completed + failed) if completed + failed else None
    return NameRow(name, completed, failed, failure_rate=rate, wait_ms=Percentiles(p95=wait_p95))


def test_names_sort_either_way_with_unmeasured_names_last():
    rows = [row("b", 5, 1, 30.0), row("a", 5, 0, None), row("c", 1, 1, 900.0)]
    assert [r.name for r in sorted_rows(rows, "-runs")] == ["b", "a", "c"]
    assert [r.name for r in sorted_rows(rows, "runs")] == ["c", "a", "b"]
    assert [r.name for r in sorted_rows(rows, "-wait_p95")] == ["c", "b", "a"]
    assert [r.name for r in sorted_rows(rows, "wait_p95")] == ["b", "c", "a"]
    assert [r.name for r in sorted_rows(rows, "-failure_rate")] == ["c", "b", "a"]
    assert [r.name for r in sorted_rows(rows, "-name")] == ["c", "b", "a"]


def test_a_heading_turns_its_order_round_and_keeps_the_range():
    by_key = {h.key: h for h in headings("-runs", "7d")}
    assert by_key["runs"].current and by_key["runs"].params == "range=7d&sort=runs"
    assert by_key["name"].params == "range=7d&sort=name"
    assert by_key["wait_p95"].params == "range=7d&sort=-wait_p95"
