"""``api/search/``: one search over every queue (or those named), streamed as NDJSON.

Lines, in order: ``{"type": "match", "queue", "connection", "id", "name", "state", "match"}``
for every match (``match``: where it matched and the text around it), ``{"type": "queue",
...}`` once a queue with matches has been scanned, ``{"type": "skipped", "queue", "connection",
"error"}`` for a queue that could not be read (the others are searched), ``{"type": "progress",
...}`` now and then,
and last ``{"type": "progress", "done": true, "scanned", "matched", "truncated", "queues",
"queuesTotal"}`` (as the one-queue search ends). With ``render=html`` (the results page) the
lines also carry the server's markup for them, and progress lines what the page says of them
(``text``). A client runs at most two at once (429), and
the scan stops when the client goes away.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator
from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils import translation

from dashboard.auth.guards import api_view
from dashboard.auth.principal import from_request
from dashboard.auth.viewer import can_act_on, viewer_kind
from dashboard.forms.answer import valid
from dashboard.forms.search import SearchAllForm, query_data
from dashboard.search import export, progress_text, slots
from dashboard.search import render as search_render
from dashboard.search.scope import queues_to_search
from dashboard.search.streams import ndjson_line, search_response
from queues.reads.jsontext import dumps
from queues.reads.keys import STATES, QueueRef
from queues.search.all_queues import Match, Progress, QueueDone, QueueSkipped, search_queues
from queues.search.scan import parse_query

logger = logging.getLogger(__name__)

PROGRESS_EVERY = 0.1  # seconds between progress lines (the last one always comes)


def match_line(item: Match, needle: str) -> dict[str, Any]:
    job = item.job
    root = item.field.partition(".")[0]
    if root in ("data", "opts", "returnvalue"):
        value = job.get(root)
        text = value if isinstance(value, str) else dumps(value).decode()
    elif root == "logs":
        text = "\n".join(str(line) for line in job.get("logs") or [])
    else:
        text = str(job.get(item.field) or "")
    return {
        "type": "match",
        "queue": item.ref.slug,
        "connection": item.ref.connection,
        "id": str(job["id"]),
        "name": job.get("name"),
        "state": item.state,
        "match": {"in": item.field, "text": search_render.excerpt(text, needle)},
    }


def progress_line(item: Progress, language: str | None = None) -> dict[str, Any]:
    """The scan's figures; for the results page (``language``) also what it says of them."""
    line: dict[str, Any] = {
        "type": "progress",
        "queues": item.queues_done,
        "queuesTotal": item.queues_total,
        "scanned": item.scanned,
        "matched": item.matched,
        "done": item.done,
    }
    if item.done:
        line["truncated"] = item.truncated
    if item.full:
        line["full"] = True
    if item.skipped:
        line["skipped"] = item.skipped
    if language is not None:
        with translation.override(language):
            line["text"] = progress_text.all_queues_search(
                item.queues_done,
                item.queues_total,
                item.scanned,
                item.matched,
                item.skipped,
                done=item.done,
                full=item.full,
                truncated=bool(item.done and item.truncated),
            )
    return line


@api_view
async def search_all(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    found = valid(SearchAllForm(query_data(request.GET, "state", "queues", "columns"))).cleaned_data
    raw, render = found["q"], found["render"]
    states = found["state"] or list(STATES)
    principal = await from_request(request)
    request.bullpen_principal = principal  # type: ignore[attr-defined]
    refs = await queues_to_search(request, found["queues"])
    kind = await viewer_kind(principal) if render else "anonymous"
    slot = slots.take(slots.client_key(request))
    if slot is None:
        return slots.too_many(slots.MAX_PER_CLIENT)
    query = parse_query(raw)
    needle = query.text
    # The stream is written after the view returns: the page's language is taken now.
    language = translation.get_language() if render else None
    if found["format"] == "csv":
        rows = csv_rows(refs, states, raw, found["columns"], found["budget"], found["max_matches"])
        return search_response(rows, slot, logger, download="csv")

    async def lines() -> AsyncGenerator[bytes, None]:
        by_queue: dict[str, int] = {}  # matches so far by queue, for the page's group counts
        shown_at = 0.0
        async for item in search_queues(
            refs,
            states,
            raw,
            budget=found["budget"],
            max_matches=found["max_matches"],
        ):
            if isinstance(item, Match):
                line = match_line(item, needle)
                if render:
                    slug = item.ref.slug
                    if slug not in by_queue:
                        line["group"] = search_render.group_html(item.ref)
                    by_queue[slug] = line["queueMatched"] = by_queue.get(slug, 0) + 1
                    line["html"] = search_render.row_html(
                        item.ref, item.state, item.job, line["match"]
                    )
                yield ndjson_line(line)
            elif isinstance(item, QueueSkipped):
                skipped: dict[str, Any] = {
                    "type": "skipped",
                    "queue": item.ref.slug,
                    "connection": item.ref.connection,
                    "error": item.error,
                }
                if render:
                    skipped["html"] = search_render.skipped_html(item.ref, item.error)
                yield ndjson_line(skipped)
            elif isinstance(item, QueueDone):
                if not item.matched:
                    continue
                done: dict[str, Any] = {
                    "type": "queue",
                    "queue": item.ref.slug,
                    "connection": item.ref.connection,
                    "scanned": item.scanned,
                    "matched": item.matched,
                    "states": item.by_state,
                }
                if render:
                    done["html"] = search_render.foot_html(
                        item.ref,
                        item.scanned,
                        item.matched,
                        item.by_state,
                        raw,
                        can_act=can_act_on(kind, item.ref.slug),
                        states=states,
                    )
                yield ndjson_line(done)
            elif item.done or time.monotonic() - shown_at >= PROGRESS_EVERY:
                shown_at = time.monotonic()
                yield ndjson_line(progress_line(item, language))

    return search_response(lines(), slot, logger, download=found["format"])


async def csv_rows(
    refs: list[QueueRef],
    states: list[str],
    raw: str,
    columns: list[str],
    budget: int | None,
    max_matches: int | None,
) -> AsyncGenerator[bytes, None]:
    """The header, then a row per match as it is found."""
    yield export.header(columns)
    async for item in search_queues(refs, states, raw, budget=budget, max_matches=max_matches):
        if isinstance(item, Match):
            yield export.row(item.ref.slug, item.state, item.job, columns)
        elif isinstance(item, QueueSkipped):
            yield export.error_line({"error": f"{item.ref.slug}: {item.error}"})
        elif isinstance(item, Progress) and item.done and item.truncated:
            yield export.truncated_line(item.scanned)
