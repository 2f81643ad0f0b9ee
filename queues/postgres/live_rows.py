"""Live rows and job pages of a Postgres store's queues: BullMQ's event table read as the Redis
follower reads the event streams, into the same row, job, progress and log messages
(queues/live/rows.py, progress.py; the same templates render them).

Only queues that open pages watch (rows, a job page, a flow tree) are read: what every server
process's pages watch is read from the state Redis, where each process publishes it
(queues/live/interest.py); without a Redis, what this process's own pages watch. Each watched
queue has a cursor, the last event id read; every pass reads what came after it for all of them
in one round trip (BullMQ's ``read_events``), so a notification BullMQ skipped costs a pass's
delay, never an update. A queue newly watched
starts a few events back, so that what happened while its page was opening is sent too. A
watched job's new log lines are found by its log's length (BullMQ's ``get_job_logs_count``),
a newly watched job's last few lines sent again for the same reason.
The cost is per watched queue and job, whatever the number of viewers.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from redis.exceptions import RedisError

from queues.errors import BullpenError
from queues.live import interest
from queues.live import protocol as live_protocol
from queues.live.events import QueueEvent
from queues.live.interest import Everyone, Interest, JobKey
from queues.live.outbox import Outbox
from queues.live.progress import ProgressUpdates
from queues.live.rows import RowChanges
from queues.live.schedule import Periodic
from queues.live.settings import LiveSettings
from queues.live.watching import Watching
from queues.postgres.queue_reads import ref_of
from queues.postgres.sessions import session
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.redis.clients import get_client
from queues.redis.connections import own_key_prefix

log = logging.getLogger("bullpen.live")

# Events a newly watched queue's cursor starts back from.
LOOKBACK = 50
# Log lines a newly watched job's tail starts back from.
LOG_LOOKBACK = 50
# Events read per queue and pass; a queue further behind catches up over the next passes.
EVENTS_PER_READ = 500
# No other process's pages: a reader that serves its own alone starts each pass from these.
NOBODY = Everyone(set(), set(), False)


def queue_event(row: dict[str, Any], at_ms: int) -> QueueEvent:
    """An event row as the Redis stream's entry would read: its fields as strings."""
    given = row.get("data")
    data: dict[str, Any] = given if isinstance(given, dict) else {}
    fields = {
        str(name): value if isinstance(value, str) else json.dumps(value)
        for name, value in data.items()
    }
    fields["event"] = str(row.get("event") or "")
    job_id = fields.get("jobId")
    return QueueEvent(f"{at_ms}-{row.get('id')}", fields["event"], job_id, fields)


class PostgresLiveRows:
    def __init__(
        self,
        outbox: Outbox,
        connection: str,
        registry: Interest | None,
        settings: LiveSettings,
        *,
        shared: bool = True,
    ) -> None:
        """``shared`` False: this process's pages alone (``registry``), none published."""
        self.connection = connection
        self.shared = shared
        self.registry = registry  # this process's own pages: they count at once
        self.watching = Watching(connection)
        self.rows = RowChanges(outbox, self.watching, settings.row_reads_per_second)
        self.progress = ProgressUpdates(outbox, self.watching)
        self.outbox = outbox
        self.cursors: dict[str, int] = {}  # watched queue's name → the last event id read
        self.log_lengths: dict[JobKey, int] = {}
        self.read_interest = Periodic(settings.interest_interval)
        self.tail_logs = Periodic(settings.logs_interval)

    def _ref(self, slug: str) -> QueueRef | None:
        try:
            ref = QueueRef.from_slug(slug)
        except BullpenError:
            return None  # a page asked for a queue that cannot exist
        return ref if ref.connection == self.connection else None

    def _names(self) -> set[str]:
        slugs = {*self.watching.queues, *(s for s, _ in self.watching.jobs)}
        slugs.update(slug for slug, _ in self.watching.nodes)
        return {ref.name for ref in map(self._ref, slugs) if ref is not None}

    async def _interest(self) -> None:
        if not self.shared:
            self.watching.everywhere(NOBODY)  # what was watched and is no more is dropped
        elif self.read_interest.due():
            key = f"{own_key_prefix(connections.state_name())}:live:interest"
            try:
                everyone = await interest.read_all(get_client(connections.state_name()), key)
            except RedisError as error:  # the state Redis is away: keep what was known
                log.warning("live rows of %s: interest not read: %s", self.connection, error)
            else:
                self.watching.everywhere(everyone)
        if self.registry is not None:
            self.watching.add_own(self.registry)

    async def follow(self) -> None:
        """One pass: the watched queues' new events, sent as rows, job states and progress;
        new log lines of watched jobs."""
        await self._interest()
        names = self._names()
        for gone in set(self.cursors) - names:
            del self.cursors[gone]
        pages = session(self.connection)
        new = sorted(names - set(self.cursors))
        if new:
            found = await pages.commands([("read_events_max", [name]) for name in new])
            for name, rows in zip(new, found, strict=True):
                self.cursors[name] = max(0, int(rows[0]["max"] if rows else 0) - LOOKBACK)
        if not self.cursors:
            return
        order = sorted(self.cursors)
        reads = [("read_events", [name, self.cursors[name], EVENTS_PER_READ]) for name in order]
        now = int(time.time() * 1000)
        for name, events in zip(order, await pages.commands(reads), strict=True):
            ref = ref_of(name, self.connection)
            for row in events:
                self.cursors[name] = max(self.cursors[name], int(row["id"]))
                event = queue_event(row, now)
                if event.event == "progress":
                    self.progress.take(ref, event)
                else:
                    self.rows.take(ref, event)
        self.progress.flush()
        await self.rows.flush()
        if self.tail_logs.due():
            await self._tail_logs()

    async def _tail_logs(self) -> None:
        refs = {
            (slug, job_id): ref
            for slug, job_id in self.watching.jobs
            if (ref := self._ref(slug)) is not None
        }
        jobs = sorted(refs)
        for key in set(self.log_lengths) - set(jobs):
            del self.log_lengths[key]
        if not jobs:
            return
        pages = session(self.connection)
        counted = await pages.commands(
            [("get_job_logs_count", [refs[key].name, key[1]]) for key in jobs]
        )
        grown = []
        for key, rows in zip(jobs, counted, strict=True):
            length = int(rows[0]["count"]) if rows else 0
            # A job newly watched gets its last lines again: its page keeps those it has.
            known = self.log_lengths.get(key, max(0, length - LOG_LOOKBACK))
            self.log_lengths[key] = length
            if length > known:
                grown.append((key, known, length))
        if not grown:
            return
        pages_of_lines = await pages.commands(
            [
                ("get_job_logs_asc", [refs[key].name, key[1], known, length - known])
                for key, known, length in grown
            ]
        )
        for (key, known, _), lines in zip(grown, pages_of_lines, strict=True):
            text = [str(line["row"]) for line in lines]
            self.outbox.emit(("job", *key), live_protocol.logs_message(key[0], key[1], known, text))
