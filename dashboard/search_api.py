"""Streaming search: NDJSON lines (matches and progress) as the bounded scan goes."""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.http import HttpRequest, StreamingHttpResponse

from dashboard.actions_api import queue_ref
from dashboard.guards import api_view
from dashboard.params import whole_number
from queues.errors import BadParameter, BullpenError
from queues.jsontext import dumps
from queues.keys import STATES
from queues.search import Progress, parse_query, search


@api_view
async def search_api(request: HttpRequest, queue: str) -> StreamingHttpResponse:
    state = request.GET.get("state") or "failed"
    raw = request.GET.get("q", "")
    if state not in STATES:
        raise BadParameter(f"Unknown state {state!r}")
    parse_query(raw)  # a bad query is a 400 before any line is sent
    budget = whole_number(request.GET, "budget", 0) or None
    ref = await queue_ref(queue)

    async def lines() -> AsyncIterator[bytes]:
        try:
            async for item in search(ref, state, raw, budget):
                if isinstance(item, Progress):
                    yield (
                        dumps(
                            {
                                "type": "progress",
                                "scanned": item.scanned,
                                "total": item.total,
                                "matched": item.matched,
                                "done": item.done,
                            }
                        )
                        + b"\n"
                    )
                else:
                    yield dumps({"type": "job", "job": item}) + b"\n"
        except BullpenError as error:
            yield dumps({"type": "error", "error": str(error)}) + b"\n"

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson")
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # let proxies pass lines on as they come
    return response
