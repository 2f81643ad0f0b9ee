"""Streaming search: NDJSON lines (matches and progress) as the bounded scan goes.

With ``render=row`` (the queue page's search) every match line also carries ``html``: the job's
row as the queue page renders it for this viewer, so the page inserts server HTML only, and
every progress line ``text``: what the page says of it, in the page's language. With
``max_matches=N`` the search ends at the N-th match, and its last progress line says
``"full": true``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.utils import translation

from dashboard.auth.guards import api_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.auth.viewer import ViewerKind, kind_on_queue
from dashboard.forms.answer import valid
from dashboard.forms.reads import SearchForm
from dashboard.pages.job_rows import row_html
from dashboard.search import export, progress_text
from dashboard.search import slots as search_slots
from dashboard.search.streams import ndjson_line, search_response
from queues.reads.keys import QueueRef
from queues.search.scan import ScanProgress, as_listed, search

logger = logging.getLogger(__name__)


def _progress_line(item: ScanProgress, language: str | None) -> bytes:
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
    if language is not None:  # the page's search: what it says under the box, as rendered
        with translation.override(language):
            line["text"] = progress_text.queue_search(
                item.scanned,
                item.total,
                item.matched,
                item.skipped,
                done=item.done,
                full=item.full,
            )
    return ndjson_line(line)


async def _row_lines(
    ref: QueueRef, state: str, matches: list[dict[str, Any]], viewer: ViewerKind
) -> list[bytes]:
    rows = await as_listed(ref, state, [dict(match) for match in matches])
    return [
        ndjson_line({"type": "job", "job": match, "html": row_html(ref, state, row, viewer=viewer)})
        for match, row in zip(matches, rows, strict=True)
    ]


@api_view
async def search_api(request: HttpRequest, queue: str) -> StreamingHttpResponse | JsonResponse:
    found = valid(SearchForm(request.GET)).cleaned_data
    state, raw, render = found["state"], found["q"], found["render"]
    budget, max_matches = found["budget"], found["max_matches"]
    ref = await queue_ref(queue)
    viewer = await kind_on_queue(request, ref.slug) if render else "anonymous"
    # The stream is written after the view returns: the page's language is taken now.
    language = translation.get_language() if render else None
    most = search_slots.MAX_QUEUE_SEARCHES_PER_CLIENT
    slot = search_slots.take(f"queue|{search_slots.client_key(request)}", most)
    if slot is None:
        return search_slots.too_many(most)

    if found["format"] == "csv":
        return search_response(
            csv_rows(ref, state, raw, found["columns"], budget, max_matches),
            slot,
            logger,
            download="csv",
        )

    async def lines() -> AsyncGenerator[bytes, None]:
        # Rows are rendered a chunk at a time: matches wait for their chunk's progress line,
        # so that they are read again for the list in one round trip.
        matches: list[dict[str, Any]] = []
        async for item in search(ref, state, raw, budget, max_matches=max_matches):
            if not isinstance(item, ScanProgress):
                if render:
                    matches.append(item)
                else:
                    yield ndjson_line({"type": "job", "job": item})
                continue
            if matches:
                for line in await _row_lines(ref, state, matches, viewer):
                    yield line
                matches = []
            yield _progress_line(item, language)

    return search_response(lines(), slot, logger, download=found["format"])


async def csv_rows(
    ref: QueueRef,
    state: str,
    raw: str,
    columns: list[str],
    budget: int | None,
    max_matches: int | None,
) -> AsyncGenerator[bytes, None]:
    """The header, then a row per match as it is found."""
    yield export.header(columns)
    async for item in search(ref, state, raw, budget, max_matches=max_matches):
        if not isinstance(item, ScanProgress):
            yield export.row(ref.slug, state, item, columns)
        elif item.done and not item.full and item.scanned < item.total:
            yield export.truncated_line(item.scanned)
