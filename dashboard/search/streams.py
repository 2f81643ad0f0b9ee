"""A search's streamed answer, shared by the one-queue and every-queue searches: NDJSON lines,
ended by an ``error`` line when the search fails (a stream already begun cannot become a 500),
bounded in bytes (``SEARCH_STREAM_MAX_BYTES``), and the client's search slot given back when the
stream ends, or when a stream never begun is dropped.

Matches are whole jobs (or their rows), and a search may match many large ones: without a
bound one request could stream gigabytes, held by the client and paid for by the server. At
the bound the stream ends with an ``error`` line saying why, never silently: a reader that
stopped at a byte count would otherwise take a cut answer for the whole one.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from django.http import StreamingHttpResponse

from dashboard.search import export
from dashboard.search.slots import Slot
from queues.config.settings import get_config
from queues.errors import BullpenError
from queues.reads.jsontext import dumps

# The last line of a stream that failed for a reason the server logged (not the client's).
STOPPED = "The search stopped on an error on the server (logged); its results so far are above"


def ndjson_line(item: dict[str, Any]) -> bytes:
    return dumps(item) + b"\n"


def search_response(
    lines: AsyncGenerator[bytes, None],
    slot: Slot,
    logger: logging.Logger,
    *,
    download: str = "",
) -> StreamingHttpResponse:
    """The answer streaming ``lines``, a failure logged to ``logger`` (the view's own).
    ``download``: "csv" (lines are CSV rows) or "ndjson", an attachment to save."""
    line_of = export.error_line if download == "csv" else ndjson_line
    stream = _guarded(lines, slot, logger, line_of)
    # A stream the server never began (its client left first) gives its slot back when dropped.
    weakref.finalize(stream, slot.release)
    kind = "text/csv; charset=utf-8" if download == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(bounded(stream, line_of), content_type=kind)
    if download:
        response["Content-Disposition"] = f'attachment; filename="bullpen-search.{download}"'
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # let proxies pass lines on as they come
    return response


async def _guarded(
    lines: AsyncGenerator[bytes, None],
    slot: Slot,
    logger: logging.Logger,
    line_of: Callable[[dict[str, Any]], bytes],
) -> AsyncGenerator[bytes, None]:
    try:
        async for line in lines:
            yield line
    except BullpenError as error:
        yield line_of({"type": "error", "error": str(error)})
    except Exception:
        # A stream already begun cannot become a 500: its last line says it stopped.
        logger.exception("search stream failed")
        yield line_of({"type": "error", "error": STOPPED})
    finally:
        try:
            await lines.aclose()  # the search stops and gives back what it held
        finally:
            slot.release()


def limit() -> int:
    return int(get_config()["SEARCH_STREAM_MAX_BYTES"])


def too_long(most: int, line_of: Callable[[dict[str, Any]], bytes] | None = None) -> bytes:
    error = (
        f"The answer reached its limit of {most:,} bytes (SEARCH_STREAM_MAX_BYTES): "
        "narrow the search, or ask for fewer matches"
    )
    return (line_of or ndjson_line)({"type": "error", "error": error})


async def bounded(
    lines: AsyncGenerator[bytes, None],
    line_of: Callable[[dict[str, Any]], bytes] | None = None,
) -> AsyncIterator[bytes]:
    """``lines`` until the next one would pass the bound; then the ``error`` line, and
    ``lines`` is closed (its search stops, and gives back what it held)."""
    most = limit()
    sent = 0
    try:
        async for line in lines:
            if sent + len(line) > most:
                yield too_long(most, line_of)
                return
            sent += len(line)
            yield line
    finally:
        await lines.aclose()
