"""A search's answer, bounded in bytes (``SEARCH_STREAM_MAX_BYTES``).

Matches are whole jobs (or their rows), and a search may match many large ones: without a
bound one request could stream gigabytes, held by the client and paid for by the server. At
the bound the stream ends with an ``error`` line saying why, never silently: a reader that
stopped at a byte count would otherwise take a cut answer for the whole one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from queues.config.settings import get_config
from queues.reads.jsontext import dumps


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
