"""``api/audit/``: the audit log with the page's filters (``queue``, ``user``) and ``action``,
``result``, newest first, as JSON (``{"entries": [...]}``, the default) or ``format=csv``;
streamed a few hundred rows at a time, so an export of any size holds little memory.

Only operators read it (as the page), and only the rows of queues they may view.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse

from dashboard.audit.visible import visible_entries
from dashboard.auth.access import allows, write_check
from dashboard.auth.guards import api_view
from dashboard.auth.principal import from_request
from dashboard.forms.answer import valid
from dashboard.forms.reads import AuditExportForm
from dashboard.models import AuditEntry
from dashboard.search.export import cell, csv_line
from queues.reads.jsontext import dumps

COLUMNS = (
    "created_at",
    "username",
    "via",
    "remote_addr",
    "action",
    "queue",
    "connection",
    "job_ids",
    "count",
    "result",
    "status",
    "error",
    "detail",
)
CHUNK = 500  # rows read from the database at a time


def entry_json(entry: AuditEntry) -> dict[str, Any]:
    row: dict[str, Any] = {name: getattr(entry, name) for name in COLUMNS}
    row["created_at"] = entry.created_at.isoformat()
    row["id"] = entry.pk
    return row


@api_view
async def audit_api(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    principal = await from_request(request)
    if not principal.authenticated:
        return JsonResponse({"error": "Authentication required"}, status=401)
    if not await allows(write_check(), principal):
        return JsonResponse({"error": "Only operators may read the audit log"}, status=403)
    found = valid(AuditExportForm(request.GET)).cleaned_data
    entries = await visible_entries(request)
    for name, column in (("queue", "queue"), ("user", "username"), ("action", "action")):
        if found[name]:
            entries = entries.filter(**{column: found[name]})
    if found["result"]:
        entries = entries.filter(result=found["result"])
    rows = entries.aiterator(chunk_size=CHUNK)
    if found["format"] == "csv":
        response = StreamingHttpResponse(_csv(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="bullpen-audit.csv"'
    else:
        response = StreamingHttpResponse(_json(rows), content_type="application/json")
    response["Cache-Control"] = "no-store"
    return response


async def _csv(rows: AsyncIterator[AuditEntry]) -> AsyncIterator[bytes]:
    yield csv_line(list(COLUMNS))
    async for entry in rows:
        values = entry_json(entry)
        yield csv_line([cell(values[name]) for name in COLUMNS])


async def _json(rows: AsyncIterator[AuditEntry]) -> AsyncIterator[bytes]:
    yield b'{"entries": ['
    first = True
    async for entry in rows:
        yield (b"" if first else b",") + dumps(entry_json(entry))
        first = False
    yield b"]}"
