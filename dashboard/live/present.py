"""What a page that starts watching is sent at once, read fresh: the counts (the followers'
last known ones when they are current, else one read), its list of jobs, its job. Nothing that
changed between the page load and its subscription is missed; live messages follow
(consumers.py)."""

from __future__ import annotations

from typing import Any, cast

from django.utils import translation

from dashboard.auth.viewer import ViewerKind
from dashboard.forms.reads import PAGE_SIZES
from dashboard.live import render as live_render
from dashboard.live import shared_reads
from queues.errors import BullpenError
from queues.live import protocol
from queues.live.count_changes import counts_entry
from queues.live.follower import Follower
from queues.reads import counts
from queues.reads.detail import job_live_view
from queues.reads.keys import QueueRef
from queues.reads.listing import job_page
from queues.reads.pause_reasons import pause_reasons
from queues.redis import connections

# A read that fails with one of these sends nothing: the status message says when Redis is away.
SNAPSHOT_ERRORS = (BullpenError, OSError, ConnectionError)


def snapshot(
    running: list[Follower], slug: str | None, since: str = ""
) -> protocol.LiveMessage | None:
    """The followers' last known counts (no Redis read): ``slug``'s from its connection's
    follower, or every connection's for an overview (None unless each has some); only those
    changed after ``since``, the version the page was rendered at, when it names the readers'
    present era (an empty message when nothing changed)."""
    version = since or None
    if slug is not None:
        connection = connections.split_slug(slug)[0]
        return next(
            (f.snapshot(slug, version) for f in running if f.connection == connection), None
        )
    if len(running) == 1:
        return running[0].snapshot(version=version)
    entries: list[protocol.OverviewEntry] = []
    totals: dict[str, protocol.ConnectionTotals] = {}
    for follower in running:
        found = follower.snapshot(version=version)
        if found is None or found["type"] != "counts":
            return None
        entries += cast(list[protocol.OverviewEntry], found["queues"])
        totals.update(found.get("totals", {}))
    return protocol.overview_counts_message(entries, totals=totals)


async def read_counts(slug: str | None = None) -> protocol.CountsMessage | None:
    """Counts for a page whose process has none yet (it started a moment ago, or another
    process reads the event streams): one round trip, as a page load costs; only ``slug``'s
    when it is given."""
    try:
        found = await counts.summaries(None if slug is None else [QueueRef.from_slug(slug)])
        reasons = await pause_reasons([s.ref for s in found if s.paused])
    except Exception:  # Redis away: the status message says so, counts come when it is back
        return None
    entries = [counts_entry(s.ref, s.counts, s.paused, reasons.get(s.ref, "")) for s in found]
    if slug is None:  # for the overview
        overview = [protocol.overview_entry(entry) for entry in entries]
        return protocol.overview_counts_message(overview)
    return protocol.counts_message(entries)


async def list_html(slug: str, spec: dict[str, Any], kind: ViewerKind, language: str) -> str:
    """The page's list as Redis holds it now, rendered for its viewer and language; one read
    for the pages that ask for the same list together (shared_reads.py)."""
    state, page, per_page, order = spec["state"], spec["page"], spec["per_page"], spec["order"]

    async def read() -> str:
        found = await job_page(QueueRef.from_slug(slug), state, page, per_page, order)
        with translation.override(language):
            return live_render.list_html(slug, found, kind, PAGE_SIZES)

    key = (slug, state, page, per_page, order, kind, language)
    return await shared_reads.list_reads().get(key, read)


async def job(slug: str, job_id: str, kind: ViewerKind, language: str) -> dict[str, Any]:
    """The job page's live message as Redis holds the job now, rendered for its viewer."""
    found = await job_live_view(QueueRef.from_slug(slug), job_id)
    message = protocol.job_message(slug, found)
    with translation.override(language):
        return live_render.render(message, kind)
