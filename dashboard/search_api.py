"""Streaming search: NDJSON lines (matches and progress) as the bounded scan goes.

With ``render=row`` (the queue page's search) every match line also carries ``html``: the job's
row as the queue page renders it for this viewer, so the page inserts server HTML only. With
``max_matches=N`` the search ends at the N-th match, and its last progress line says
``"full": true``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

from django.http import HttpRequest, StreamingHttpResponse

from dashboard.actions_api import queue_ref
from dashboard.guards import api_view
from dashboard.job_rows import row_html
from dashboard.params import text, whole_number
from dashboard.principal import from_request
from dashboard.viewer import ViewerKind, viewer_kind
from queues.errors import BadParameter, BullpenError
from queues.jsontext import dumps
from queues.keys import STATES, QueueRef
from queues.search import MAX_BUDGET, Progress, as_listed, parse_query, search

RENDERINGS = ("", "row")
MAX_QUERY = 2000  # characters of a search query


def _line(item: dict[str, Any]) -> bytes:
    return dumps(item) + b"\n"


def _progress_line(item: Progress) -> bytes:
    line: dict[str, Any] = {
        "type": "progress",
        "scanned": item.scanned,
        "total": item.total,
        "matched": item.matched,
        "done": item.done,
    }
    if item.full:
        line["full"] = True  # only ever sent to a client that gave max_matches
    if item.skipped:
        line["skipped"] = item.skipped  # data a data.<path> query could not parse
    return _line(line)


async def _row_lines(
    ref: QueueRef, state: str, matches: list[dict[str, Any]], viewer: ViewerKind
) -> list[bytes]:
    rows = await as_listed(ref, state, [dict(match) for match in matches])
    return [
        _line({"type": "job", "job": match, "html": row_html(ref, state, row, viewer=viewer)})
        for match, row in zip(matches, rows, strict=True)
    ]


def _optional(values: Mapping[str, str], name: str, high: int) -> int | None:
    if values.get(name, "") == "":
        return None
    return whole_number(values, name, low=1, high=high)


@api_view
async def search_api(request: HttpRequest, queue: str) -> StreamingHttpResponse:
    state = text(request.GET, "state") or "failed"
    raw = text(request.GET, "q", longest=MAX_QUERY)
    render = text(request.GET, "render")
    if state not in STATES:
        raise BadParameter(f"Unknown state {state!r}")
    if render not in RENDERINGS:
        raise BadParameter("render must be 'row' or left out")
    parse_query(raw)  # a bad query is a 400 before any line is sent
    budget = _optional(request.GET, "budget", MAX_BUDGET)
    max_matches = _optional(request.GET, "max_matches", MAX_BUDGET)
    ref = await queue_ref(queue)
    viewer = await viewer_kind(await from_request(request)) if render else "anonymous"

    async def lines() -> AsyncIterator[bytes]:
        # Rows are rendered a chunk at a time: matches wait for their chunk's progress line,
        # so that they are read again for the list in one round trip.
        matches: list[dict[str, Any]] = []
        try:
            async for item in search(ref, state, raw, budget, max_matches=max_matches):
                if not isinstance(item, Progress):
                    if render:
                        matches.append(item)
                    else:
                        yield _line({"type": "job", "job": item})
                    continue
                if matches:
                    for line in await _row_lines(ref, state, matches, viewer):
                        yield line
                    matches = []
                yield _progress_line(item)
        except BullpenError as error:
            yield _line({"type": "error", "error": str(error)})

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson")
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # let proxies pass lines on as they come
    return response
