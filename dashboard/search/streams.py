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
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from django.http import StreamingHttpResponse

from dashboard.search.slots import Slot
from queues.config.settings import get_config
from queues.errors import BullpenError
from queues.reads.jsontext import dumps

# The last line of a stream that failed for a reason the server logged (not the client's).
STOPPED = "The search stopped on an error on the server (logged); its results so far are above"


def ndjson_line(item: dict[str, Any]) -> bytes:
    return dumps(item) + b"\n"


def search_response(
    lines: AsyncGenerator[bytes, None], slot: Slot, logger: logging.Logger
) -> StreamingHttpResponse:
    """The answer streaming ``lines``, a failure logged to ``logger`` (the view's own)."""
    stream = _guarded(lines, slot, logger)
    # A stream the server never began (its client left first) gives its slot back when dropped.
    weakref.finalize(stream, slot.release)
    response = StreamingHttpResponse(bounded(stream), content_type="application/x-ndjson")
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # let proxies pass lines on as they come
    return response


async def _guarded(
    lines: AsyncGenerator[bytes, None], slot: Slot, logger: logging.Logger
) -> AsyncGenerator[bytes, None]:
    try:
        async for line in lines:
            yield line
    except BullpenError as error:
        yield ndjson_line({"type": "error", "error": str(error)})
    except Exception:
        # A stream already begun cannot become a 500: its last line says it stopped.
        logger.exception("search stream failed")
        yield ndjson_line({"type": "error", "error": STOPPED})
    finally:
        try:
            await lines.aclose()  # the search stops and gives back what it held
        finally:
            slot.release()


def limit() -> int:
    return int(get_config()["SEARCH_STREAM_MAX_BYTES"])


def too_long(most: int) -> bytes:
    error = (
        f"The answer reached its limit of {most:,} bytes (SEARCH_STREAM_MAX_BYTES): "
        "narrow the search, or ask for fewer matches"
    )
    return dumps({"type": "error", "error": error}) + b"\n"


async def bounded(lines: AsyncGenerator[bytes, None]) -> AsyncIterator[bytes]:
    """``lines`` until the next one would pass the bound; then the ``error`` line, and
    ``lines`` is closed (its search stops, and gives back what it held)."""
    most = limit()
    sent = 0
    try:
        async for line in lines:
            if sent + len(line) > most:
                yield too_long(most)
                return
            sent += len(line)
            yield line
    finally:
        await lines.aclose()
