"""Reading what one overview page lists: every queue's counts and alerts in one round trip each,
then the filter, grouping, order and page (overview_list.py), then the sparklines of the queues
on that page only (one more round trip). The HTML page, its fragments and ``api/queues/`` all
come through here.
"""

from __future__ import annotations

import time
from typing import Any

from redis.exceptions import ResponseError

from dashboard.api.serializers import queue_json
from dashboard.auth.queue_access import EVERYTHING, QueueAccess
from dashboard.live.reader_counts import ReaderCounts
from dashboard.pages.overview_list import Listing, ListQuery, group_key, list_queues
from queues.alerts.shown import status_of
from queues.alerts.silences import read_holds
from queues.alerts.thresholds import read_alerts
from queues.errors import BullpenError
from queues.reads.counts import Known, QueueSummary, summaries
from queues.reads.discovery import discovered
from queues.reads.keys import QueueRef
from queues.reads.pause_reasons import pause_reasons
from queues.reads.stuck import stuck_counts
from queues.reads.workers import list_workers
from queues.redis import connections, reachability
from queues.redis.errors import translate_redis_errors
from queues.throughput.rates import series_of


async def all_queues(
    *, alerts: bool, access: QueueAccess = EVERYTHING, known: Known | None = None
) -> tuple[list[QueueSummary], list[dict[str, Any]]]:
    """Every queue ``access`` may view, as the API describes it, with the alerts firing on it
    when asked for (a second round trip, for the queues that keep finished jobs, and one for
    the silences and acknowledgements): each alert with its ``status`` (firing, acknowledged
    or silenced) and, when someone holds it, its ``hold``. ``known``: the counts the live
    readers keep (dashboard/live/reader_counts.py), read from Redis only where they have none."""
    found = access.visible(await summaries(known=known), lambda summary: summary.ref.slug)
    still = known.still if isinstance(known, ReaderCounts) else None
    firing = await read_alerts(found, still=still) if alerts else {}
    now = time.time()
    holds = await read_holds(now) if any(firing.values()) else {}
    queues = []
    for summary in found:
        queue = queue_json(summary)
        queue["alerts"] = []
        for alert in firing.get(summary.ref, ()):
            hold = holds.get((summary.ref.slug, alert.rule))
            shown = {**alert.as_json(), "status": status_of(hold, now)}
            if hold is not None:
                shown["hold"] = hold.as_json()
            queue["alerts"].append(shown)
        queues.append(queue)
    return found, queues


async def _count_stuck(found: list[QueueSummary], queues: list[dict[str, Any]]) -> None:
    """Each queue's stuck jobs (active, their lock gone), read only for the queues with active
    jobs: one round trip per connection; a queue whose read failed shows none."""
    busy = [
        summary.ref
        for summary, queue in zip(found, queues, strict=True)
        if queue["counts"].get("active")
    ]
    if not busy:
        return
    try:
        stuck = await stuck_counts(busy)
    except BullpenError:
        return  # a Redis gone meanwhile: its queues say so elsewhere; the list still shows
    for summary, queue in zip(found, queues, strict=True):
        if stuck.get(summary.ref):
            queue["stuck"] = stuck[summary.ref]


async def _count_workers(found: list[QueueSummary], queues: list[dict[str, Any]]) -> None:
    """Each queue's connected workers (one CLIENT LIST); left unknown where Redis refuses it."""
    try:
        connections = await list_workers([summary.ref for summary in found])
    except (ResponseError, BullpenError):
        return  # a hosted Redis whose user may not list clients: "no workers" stays unknown
    per_queue: dict[str, int] = {}
    for connection in connections:
        per_queue[connection.queue] = per_queue.get(connection.queue, 0) + 1
    for queue in queues:
        queue["workers"] = per_queue.get(queue["slug"], 0)


async def _add_pause_reasons(queues: list[dict[str, Any]]) -> None:
    """The reason each paused queue of the page was paused with, where one was given."""
    paused = {QueueRef(q["prefix"], q["name"], q["connection"]): q for q in queues if q["paused"]}
    if paused:
        for ref, reason in (await pause_reasons(list(paused))).items():
            paused[ref]["pauseReason"] = reason


async def read_listing(
    query: ListQuery, *, page: bool = True, access: QueueAccess = EVERYTHING
) -> Listing:
    """``page``: for the HTML page, with alerts and sparklines; the API reads alerts only to
    find problems. Only the queues ``access`` may view are listed, counted and totalled. The
    counts are the live readers' where they keep them (``Listing.live_version`` then says which
    version of them the page shows)."""
    known = ReaderCounts()
    found, queues = await all_queues(alerts=page or query.problems, access=access, known=known)
    # Workers (one CLIENT LIST) tell which queues wait for nobody: a problem the page and the
    # API's problem filter and groups show; a plain API list does without.
    if page or query.problems or query.group:
        await _count_workers(found, queues)
        await _count_stuck(found, queues)
    listing = list_queues(queues, query)
    listing.live_version = known.version
    listing.unreachable = {
        name: detail
        for name, detail in reachability.unreachable().items()
        if name in connections.names()
    }
    lost = reachability.queues_down()
    listing.unreachable_queues = [
        {"name": ref.name, "prefix": ref.prefix, "slug": ref.slug, "connection": ref.connection}
        | {"error": lost[ref]}
        for ref in sorted(access.visible(list(lost), lambda ref: ref.slug))
    ]
    await _add_pause_reasons(listing.queues)
    if page and listing.queues:
        refs = [QueueRef(q["prefix"], q["name"], q["connection"]) for q in listing.queues]
        series = await series_of(refs)
        for queue, ref in zip(listing.queues, refs, strict=True):
            queue["spark"] = series[ref]
    return listing


async def group_member_refs(
    grouping: str, delimiter: str, key: str, access: QueueAccess = EVERYTHING
) -> list[QueueRef]:
    """Every queue of one group that ``access`` may view, as the overview groups them
    (whatever the page's filter)."""
    async with translate_redis_errors():
        found = await discovered()
    return [
        ref
        for ref in access.visible(found.queues, lambda ref: ref.slug)
        if group_key(
            {"name": ref.name, "prefix": ref.prefix, "connection": ref.connection},
            grouping,
            delimiter,
        )
        == key
    ]


def listing_json(listing: Listing) -> dict[str, Any]:
    """``api/queues/``'s body: this page's queues (or groups) and where the page stands."""
    body: dict[str, Any] = {
        "queues": [_entry(queue) for queue in listing.queues],
        "total": listing.total,
        "matching": listing.matching,
        "page": listing.page,
        "pages": listing.pages,
        "perPage": listing.query.per_page,
        "totals": listing.totals,
        # Every configured Redis, and whether it could be read: a down one lists no queues.
        "connections": [
            {"name": name, "reachable": name not in listing.unreachable}
            | ({"error": listing.unreachable[name]} if name in listing.unreachable else {})
            for name in connections.names()
        ],
        # Queues that could not be read while their connection could (a Cluster master down).
        "unreachableQueues": listing.unreachable_queues,
    }
    if listing.query.group and listing.query.within is None:
        body["groups"] = [group.as_json() for group in listing.groups]
    return body


def _entry(queue: dict[str, Any]) -> dict[str, Any]:
    entry = {k: v for k, v in queue.items() if k not in ("shownCounts", "spark")}
    return entry
