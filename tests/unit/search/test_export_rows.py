"""The CSV export's rows: every value a cell, formulas made text, the data columns asked for,
and what a spreadsheet reads back."""

from __future__ import annotations

import csv
import io

from dashboard.search.export import COLUMNS, cell, error_line, header, row, truncated_line

JOB = {
    "id": "7",
    "name": "=SUM(A1:A9)",
    "timestamp": 1_800_000_000_000,
    "processedOn": None,
    "finishedOn": 1_800_000_001_000,
    "attemptsMade": 2,
    "failedReason": 'card "declined"\nsecond line',
    "data": {"user": {"id": 42}, "tags": ["a", "b"], "ok": True, "note": "-1 day", "n": -3},
}


def test_cells() -> None:
    assert [cell(v) for v in (None, True, 3, -3, 1.5, "x")] == ["", "true", "3", "-3", "1.5", "x"]
    for hostile in ("=1+1", "+1", "-1", "@x", "\tx", "\rx"):
        assert cell(hostile) == "'" + hostile
    assert cell({"a": [1, "=x"]}) == '{"a":[1,"=x"]}'


def test_a_row_reads_back() -> None:
    columns = ["data.user.id", "data.tags.1", "data.tags.9", "data.ok", "data.note", "data.n"]
    text = (header(columns) + row("mail", "failed", JOB, columns)).decode()
    [read] = list(csv.DictReader(io.StringIO(text, newline="")))
    assert list(read) == [*COLUMNS, *columns]
    assert read["name"] == "'=SUM(A1:A9)" and read["state"] == "failed"
    assert read["failedReason"] == 'card "declined"\nsecond line'
    assert (read["processedOn"], read["finishedOn"]) == ("", "1800000001000")
    assert [read[c] for c in columns] == ["42", "b", "", "true", "'-1 day", "-3"]


def test_last_rows() -> None:
    assert error_line({"error": "Redis, down"}) == b'#error,"Redis, down"\r\n'
    assert truncated_line(500) == b"#truncated,500\r\n"
