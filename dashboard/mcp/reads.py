"""The MCP server's read tools, on the API's own reads (dashboard/api/, dashboard/search/,
queues/failures/, queues/history/): what the configured identity may view, as short text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from dashboard.api.history import history_json
from dashboard.api.reads import job_body, queues_body
from dashboard.audit import writer
from dashboard.auth.identity import Principal
from dashboard.auth.queue_access import QueueAccess
from dashboard.auth.queue_lookup import canonical, queue_ref, unknown_queue
from dashboard.forms.answer import valid
from dashboard.forms.history import HistoryRangeForm
from dashboard.forms.search import SearchAllForm
from dashboard.mcp import texts
from dashboard.mcp.identity import mcp_access
from dashboard.pages import relatives
from dashboard.search.all_queues_api import match_line, progress_line
from dashboard.search.scope import queues_seen_by
from queues.errors import BullpenError
from queues.failures.failure_groups import shared_failure_groups
from queues.history.read import read_history
from queues.reads.keys import STATES, QueueRef
from queues.redis.errors import translate_redis_errors
from queues.search.all_queues import Match, Progress, search_queues
from queues.search.scan import parse_query

MOST_MATCHES = 200
MOST_GROUPS = 50


async def visible_queue(
    principal: Principal, access: QueueAccess, queue: str, tool: str, job_id: str = ""
) -> QueueRef:
    """The queue ``queue`` names, if this identity may view it; else as unknown as a missing
    one, and a look at a hidden one is audited, as a page's is."""
    slug = canonical(queue)
    if slug is not None and not access.may_view(slug):
        await writer.record_tool(
            principal,
            "view",
            queue=slug,
            job_ids=[job_id] if job_id else [],
            status=404,
            error=writer.HIDDEN_QUEUE,
            detail={"tool": tool},
        )
    if slug is None or not access.may_view(slug):
        raise unknown_queue(queue)
    return await queue_ref(slug)


async def list_queues(filter: str = "") -> str:
    """Every queue this identity may view, with its job counts (waiting, active, failed,
    delayed, prioritized, completed) and whether it is paused; ``filter``: part of the name."""
    _, access = await mcp_access()
    async with answers():
        return texts.queues_text(await queues_body({"q": filter, "per_page": "500"}, access))


async def get_job(queue: str, job_id: str) -> str:
    """One job: name, state, attempts, times, data and return value (cut, redacted), and for a
    failed one its reason and the last stack frame."""
    principal, access = await mcp_access()
    async with answers():
        ref = await visible_queue(principal, access, queue, "get_job", job_id)
        body = relatives.seen_by(access, await job_body(ref.slug, job_id))
        return texts.job_text(ref.slug, body)


async def search(
    query: str, queues: list[str] | None = None, states: list[str] | None = None, most: int = 50
) -> str:
    """Search the jobs of every queue (or those named, globs allowed) with Bullpen's query
    language: text, ``name:``, ``reason:``, ``id:``, ``data.userId = 42``, AND/OR/NOT."""
    _, access = await mcp_access()
    async with answers():
        found = valid(
            SearchAllForm({"q": query, "queues": queues or [], "state": states or []})
        ).cleaned_data
        refs = await queues_seen_by(access, found["queues"])
        needle = parse_query(found["q"]).text
        matches: list[dict[str, Any]] = []
        summary: dict[str, Any] = {}
        async for item in search_queues(
            refs,
            found["state"] or list(STATES),
            found["q"],
            budget=found["budget"],
            max_matches=max(1, min(int(most), MOST_MATCHES)),
        ):
            if isinstance(item, Match):
                line = match_line(item, needle)
                matches.append({**line, **line["match"]})
            elif isinstance(item, Progress) and item.done:
                summary = progress_line(item)
        return texts.search_text(matches, summary)


async def failure_groups(queue: str, most: int = 10) -> str:
    """A queue's failed jobs grouped by reason and innermost application frame, the biggest
    first: count, last seen, an example job, and the signature ``retry_failure_group`` takes."""
    principal, access = await mcp_access()
    async with answers():
        ref = await visible_queue(principal, access, queue, "failure_groups")
        report = await shared_failure_groups(ref)
        return texts.groups_text(ref.slug, report.as_json(), max(1, min(int(most), MOST_GROUPS)))


async def history(queue: str, range: str = "24h") -> str:
    """A queue's recorded history over ``range`` (1h, 24h, 7d, 30d, 90d): completed, failed,
    failure rate, retried, stalled, wait and run time percentiles."""
    principal, access = await mcp_access()
    async with answers():
        ref = await visible_queue(principal, access, queue, "history")
        range_name = valid(HistoryRangeForm({"range": range})).cleaned_data["range"]
        series = history_json(await read_history(ref, range_name))
        return texts.history_text(ref.slug, range_name, series["totals"])


@asynccontextmanager
async def answers() -> AsyncIterator[None]:
    """Bullpen's errors (unknown queue, bad parameter, Redis unreachable) as the tool's error,
    whose text the assistant reads."""
    try:
        async with translate_redis_errors():
            yield
    except BullpenError as error:
        raise ToolError(str(error)) from error
