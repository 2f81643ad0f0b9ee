"""A search's matches as CSV (``format=csv``), one row per match as the scan finds it, so the
answer streams in bounded memory however many jobs match.

Columns: ``queue, id, name, state, timestamp, processedOn, finishedOn, attemptsMade,
failedReason``, then the ``data.<path>`` columns asked for (``columns=data.user.id,data.plan``).
Values come from the job as read for the search, redaction applied. A text cell that a
spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return) starts with an apostrophe instead. A search that fails or reaches its byte
limit ends with a row ``#error,<why>`` (a queue that could not be read is such a row too), and
one whose budget ran out before every job was read with ``#truncated,<jobs read>``.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from queues.reads.jsontext import dumps

COLUMNS = (
    "queue",
    "id",
    "name",
    "state",
    "timestamp",
    "processedOn",
    "finishedOn",
    "attemptsMade",
    "failedReason",
)
MAX_DATA_COLUMNS = 20
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_line(cells: list[str]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(cells)
    return out.getvalue().encode()


def header(data_columns: list[str]) -> bytes:
    return csv_line([*COLUMNS, *data_columns])


def error_line(item: dict[str, Any]) -> bytes:
    """The row a stream ends with when it stops early (the NDJSON ``error`` line's)."""
    return csv_line(["#error", str(item.get("error", ""))])


def truncated_line(scanned: int) -> bytes:
    return csv_line(["#truncated", str(scanned)])


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = value if isinstance(value, str) else dumps(value).decode()
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _at(value: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif (
            isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value)
        ):
            value = value[int(part)]
        else:
            return None
    return value


def row(queue: str, state: str, job: dict[str, Any], data_columns: list[str]) -> bytes:
    cells = [
        cell(queue),
        cell(str(job["id"])),
        cell(job.get("name")),
        state,
        *(cell(job.get(name)) for name in COLUMNS[4:]),
    ]
    for column in data_columns:
        cells.append(cell(_at(job.get("data"), column.split(".")[1:])))
    return csv_line(cells)
