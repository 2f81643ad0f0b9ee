"""What a page that starts watching is sent at once, read fresh: the counts (the followers'
last known ones when they are current, else one read), its list of jobs, its job. Nothing that
changed between the page load and its subscription is missed; live messages follow
(consumers.py)."""

from __future__ import annotations

from typing import Any, cast

from django.utils import translation

from dashboard.auth.queue_access import QueueAccess
from dashboard.auth.viewer import ViewerKind
from dashboard.forms.reads import PAGE_SIZES
from dashboard.live import fanout, shared_reads
from dashboard.live import render as live_render
from dashboard.live.overview_parts import OverviewBatch, OverviewView
from dashboard.live.render import UNGROUPED, Grouping
from queues.errors import BullpenError
from queues.live import protocol
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
    present era (an empty message when nothing changed); None with a store connection."""
    version = since or None
    if slug is not None:
        connection = connections.split_slug(slug)[0]
        return next(
            (f.snapshot(slug, version) for f in running if f.connection == connection), None
        )
    if connections.postgres_names():
        # A store's counts are no follower's: an overview's are read, or its mirror would
        # lack the store's queues (their totals, and the rows they drop once obliterated).
        return None
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
    entries = [
        protocol.counts_entry(s.ref.slug, s.ref.name, s.counts, s.paused, reasons.get(s.ref, ""))
        for s in found
    ]
    if slug is None:  # for the overview
        overview = [protocol.overview_entry(entry) for entry in entries]
        return protocol.overview_counts_message(overview)
    return protocol.counts_message(entries)


async def counts_now(
    running: list[Follower],
    slug: str | None,
    since: str,
    view: OverviewView | None,
    access: QueueAccess,
    kind: ViewerKind,
    grouping: Grouping,
    language: str,
) -> dict[str, Any] | None:
    """The counts a page that starts watching is sent: ``slug``'s, every queue's for an
    overview, or an overview page's live parts for its ``view``. None while no counts can be
    read (the status message says Redis is away)."""
    if view is not None:
        return await _overview(running, view, access, language, since)
    # Resumed from the page's version only where the page needs no queue's counts but those
    # that changed: its totals come with every message, its rows are on the page. A page that
    # groups its queues, or sees some of them only, sums all it is sent.
    resumes = not access.restricted and grouping == UNGROUPED
    found = snapshot(running, slug, since if resumes else "")
    if found is None:
        found = await read_counts(slug)
    seen = None if found is None else live_render.seen_by(found, access)
    return None if seen is None else live_render.render(seen, kind, grouping)


async def _overview(
    running: list[Follower], view: OverviewView, access: QueueAccess, language: str, since: str
) -> dict[str, Any] | None:
    """An overview page's live parts as they are now (overview_parts.py): its rows' (only
    those changed since the page's version, when it is of the readers' present era), its
    groups' figures and the totals."""
    hub = fanout.hub()
    async with hub.filling:  # pages opening together: one read of every queue
        if not hub.mirror.filled:
            every = snapshot(running, None, "")
            if every is None:
                every = await read_counts(None)
            if every is None:
                return None
            hub.mirror.fill(every)
    rows = sorted(view.shown)
    changed = snapshot(running, None, since) if since and not access.restricted else None
    if changed is not None and changed["type"] == "counts":
        rows = [entry["slug"] for entry in changed["queues"] if entry["slug"] in view.shown]
    with translation.override(language):
        return OverviewBatch(hub.mirror, None).message(view, access, rows)


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
