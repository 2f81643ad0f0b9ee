"""Rows of watched queue pages whose jobs changed state, and the state of watched jobs.

Job hashes are read within a budget of ``row_reads_per_second`` (the newest changes first); the
other changes go out state-only, and the page moves or drops those rows.
"""

from __future__ import annotations

import redis.asyncio as aioredis

from queues.config.settings import get_config
from queues.live import protocol as live_protocol
from queues.live.events import QueueEvent
from queues.live.outbox import Outbox
from queues.live.protocol import Removal, RowChange
from queues.live.schedule import TokenBucket
from queues.live.watching import Watching
from queues.reads.detail import job_live_view
from queues.reads.keys import QueueRef
from queues.reads.listing import fetch_jobs
from queues.reads.stuck import stuck_counts


class RowChanges:
    ROW_READ_BATCH = 3

    def __init__(self, outbox: Outbox, watching: Watching, reads_per_second: float) -> None:
        self.outbox = outbox
        self.watching = watching
        self.budget = TokenBucket(reads_per_second, self.ROW_READ_BATCH)
        # Queue → job id → (its new state, when the event was written in ms).
        self.changed: dict[QueueRef, dict[str, tuple[str, int]]] = {}

    def take(self, ref: QueueRef, event: QueueEvent) -> None:
        if not event.job_id:
            return
        state = event.new_state or ("removed" if event.event == "removed" else None)
        if state:
            self.changed.setdefault(ref, {})[event.job_id] = (state, event.at_ms)

    def clear(self) -> None:
        self.changed.clear()

    async def flush(self) -> None:
        cap = int(get_config()["LIST_FIELD_CAP"])
        for ref in list(self.changed):
            jobs = self.changed.pop(ref)
            # A watched job's page (or a flow tree showing it) gets its state as Redis holds it
            # now, read after the event.
            for job_id in jobs:
                key = (ref.slug, job_id)
                if key in self.watching.jobs or key in self.watching.nodes:
                    view = await job_live_view(ref, job_id)
                    self.outbox.emit(
                        ("job", ref.slug, job_id), live_protocol.job_message(ref.slug, view)
                    )
            if ref.slug not in self.watching.queues:
                continue
            # Read the newest changes within the budget; the rest go out state-only.
            live = [job_id for job_id, (state, _) in jobs.items() if state != "removed"]
            granted = self.budget.take(len(live))
            to_read = live[len(live) - granted :] if granted else []
            # Only a job the event put in the delayed set has a due time to read.
            delayed = {job_id for job_id in to_read if jobs[job_id][0] == "delayed"}
            fetched = await fetch_jobs(ref, to_read, cap, due_of=delayed) if to_read else []
            rows = {row["id"]: row for row in fetched}
            out: list[RowChange] = []
            removed: list[Removal] = []
            for job_id, (state, at) in jobs.items():
                row = rows.get(job_id)
                if state == "removed" or (row is None and job_id in to_read):
                    removed.append({"id": job_id, "at": at})
                elif row is None:
                    out.append({"id": job_id, "state": state, "at": at})
                else:
                    row["state"] = state
                    out.append({"id": job_id, "state": state, "at": at, "job": row})
            self.outbox.emit(
                ("queue", ref.slug), live_protocol.rows_message(ref.slug, out, removed)
            )


class StuckChecks:
    """Jobs that become stuck (their lock expires: no event says so) on watched queues: when
    a queue's count of them changes, its open pages read their list or job again."""

    def __init__(self, outbox: Outbox, watching: Watching, connection: str) -> None:
        self.outbox = outbox
        self.watching = watching
        self.connection = connection
        self.last: dict[QueueRef, int] = {}

    async def check(self, client: aioredis.Redis) -> None:
        """``client``: one that fails at once when Redis is away (the pages hear that first)."""
        slugs = self.watching.queues | {slug for slug, _ in self.watching.jobs}
        refs = []
        for slug in slugs:
            try:
                ref = QueueRef.from_slug(slug)
            except Exception:  # noqa: S112 - a page watching a queue that cannot exist
                continue
            if ref.connection == self.connection:
                refs.append(ref)
        found = await stuck_counts(refs, client) if refs else {}
        for ref, stuck in found.items():
            before = self.last.get(ref)
            # Seen for the first time with stuck jobs: they may have become stuck after the
            # page read its list (the read again is swapped only where it differs).
            if before != stuck and (before is not None or stuck):
                self._recheck(ref.slug)
        # A queue whose read failed keeps what was seen of it last.
        self.last = {
            ref: found[ref] if ref in found else self.last[ref]
            for ref in refs
            if ref in found or ref in self.last
        }

    def _recheck(self, slug: str) -> None:
        if slug in self.watching.queues:
            self.outbox.emit(("queue", slug), live_protocol.recheck_message(slug))
        for watched, job_id in self.watching.jobs:
            if watched == slug:
                self.outbox.emit(("job", slug, job_id), live_protocol.recheck_message(slug))
