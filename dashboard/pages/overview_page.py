"""Reading what one overview page lists: every queue's counts and alerts in one round trip each,
then the filter, grouping, order and page (kept between views in overview_ledger.py, by the
rules of overview_list.py), then the sparklines of the queues on that page only (one more round
trip). The HTML page, its fragments and ``api/queues/`` all come through here.
"""

from __future__ import annotations

import asyncio
import operator
import time
from collections.abc import Mapping
from typing import Any

from redis.exceptions import ResponseError

from dashboard.auth.queue_access import EVERYTHING, QueueAccess
from dashboard.live.reader_counts import ReaderCounts
from dashboard.pages.overview_ledger import REMAKE_SHARE, OverviewLedger, ViewFacts
from dashboard.pages.overview_list import Listing, ListQuery, group_key
from queues.alerts.failed_kept import Still
from queues.alerts.kept import KeptAlerts
from queues.alerts.shown import status_of
from queues.alerts.silences import read_holds
from queues.alerts.thresholds import read_alerts
from queues.errors import BullpenError
from queues.reads.counts import QueueSummary, summaries
from queues.reads.discovery import discovered
from queues.reads.keys import QueueRef
from queues.reads.pause_reasons import pause_reasons
from queues.reads.stuck import stuck_counts
from queues.reads.workers import list_workers
from queues.redis import connections, reachability
from queues.redis.errors import translate_redis_errors
from queues.throughput.rates import series_of

# The list of every queue any viewer may see, kept between views (a viewer whose access is
# limited gets a ledger of the queues they may see, made for the view).
_ledger = OverviewLedger()


async def _shown_alerts(
    found: list[QueueSummary], still: Still | None, kept: KeptAlerts
) -> dict[QueueRef, list[dict[str, Any]]]:
    """The alerts firing on each queue that has some (a round trip for the queues that keep
    finished jobs, and one for the silences and acknowledgements): each alert with its
    ``status`` (firing, acknowledged or silenced) and, when someone holds it, its ``hold``."""
    firing = await read_alerts(found, still=still, decide=kept.alerts)
    now = time.time()
    holds = await read_holds(now) if any(firing.values()) else {}
    shown: dict[QueueRef, list[dict[str, Any]]] = {}
    for ref, alerts in firing.items():
        for alert in alerts:
            hold = holds.get((ref.slug, alert.rule))
            entry = {**alert.as_json(), "status": status_of(hold, now)}
            if hold is not None:
                entry["hold"] = hold.as_json()
            shown.setdefault(ref, []).append(entry)
    return shown


async def _count_stuck(busy: list[QueueRef]) -> dict[QueueRef, int]:
    """Each queue's stuck jobs (active, their lock gone), read only for the queues with active
    jobs: one round trip per connection; a queue whose read failed shows none."""
    if not busy:
        return {}
    try:
        return await stuck_counts(busy)
    except BullpenError:
        return {}  # a Redis gone meanwhile: its queues say so elsewhere; the list still shows


async def _count_workers(found: list[QueueSummary]) -> dict[str, int] | None:
    """Each queue's connected workers by slug (one CLIENT LIST); None where Redis refuses it."""
    try:
        connections = await list_workers([summary.ref for summary in found])
    except (ResponseError, BullpenError):
        return None  # a hosted Redis whose user may not list clients: "no workers" stays unknown
    per_queue: dict[str, int] = {}
    for connection in connections:
        per_queue[connection.queue] = per_queue.get(connection.queue, 0) + 1
    return per_queue


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
    version of them the page shows); those they cannot vouch for are read from Redis."""
    known = ReaderCounts()
    found = access.visible(await summaries(known=known), lambda summary: summary.ref.slug)
    ledger = _ledger if access.holder is None else OverviewLedger()
    still = known.still if isinstance(known, ReaderCounts) else None
    alerts = await _shown_alerts(found, still, ledger.alerts) if page or query.problems else {}
    workers: dict[str, int] | None = None
    stuck: dict[QueueRef, int] = {}
    # Workers (one CLIENT LIST) tell which queues wait for nobody: a problem the page and the
    # API's problem filter and groups show; a plain API list does without.
    if page or query.problems or query.group:
        workers = await _count_workers(found)
        ledger.update(found)
        stuck = await _count_stuck(ledger.busy_refs())
    # No await from here to the listing: another view may update the ledger meanwhile.
    ledger.update(found)
    listing = ledger.listing(query, ViewFacts(alerts, workers, stuck))
    listing.live_version = known.version
    listing.unreachable = {
        name: detail
        for name, detail in reachability.unreachable().items()
        if name in connections.names()
    }
    if listing.unreachable:
        listed = {summary.ref.connection for summary in found}
        listing.listed_anyway = frozenset(name for name in listing.unreachable if name in listed)
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


def listing_remakes() -> int:
    """How many times the kept list was made whole."""
    return _ledger.made


async def prepare_listing(every: list[QueueRef], have: Mapping[QueueRef, QueueSummary]) -> int:
    """The kept list made whole for a view of ``every`` queue when that view would make it, a
    slice of queues a step of the event loop; how many times it was made whole after.
    ``have``: the readers' summaries. While they vouch for most queues only, the others stand
    as the list keeps them (or with no counts): a view reads them from Redis and changes
    those alone."""
    if len(have) == len(every) and all(map(operator.is_, have, every)):
        found = list(have.values())
    elif len(every) - len(have) <= len(every) * REMAKE_SHARE:
        found = [have.get(ref) or _ledger.summary_of(ref) for ref in every]
    else:
        return _ledger.made  # a view reads most queues from Redis: it makes the list
    if _ledger.stale(found):
        for _ in _ledger.remaking(found):
            await asyncio.sleep(0)
    else:
        _ledger.update(found)  # the queues changed since, as the view would change them
    return _ledger.made


async def prepare_alerts(found: list[QueueSummary], still: Still | None) -> None:
    """The alerts a page of every queue reads, read once before any page asks: what is kept
    of them (each failed job's signature, the last hour's failures, the kept verdicts) then
    spares the first page the reads. At 50,000 queues that first page read 51,546 failed jobs'
    hashes, 3.6 s on a quiet machine; a page after this reads only what changed since."""
    await read_alerts(found, still=still, decide=_ledger.alerts.alerts)


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
