"""Live counts of a Postgres store's queues, pushed to the pages as the Redis follower pushes
those of Redis queues (the same messages, topics and templates).

BullMQ's SQL functions ``NOTIFY bullmq_events`` (and ``bullmq_jobs``) with the queue's name when
a queue changes. The reader LISTENs on a session of its own and re-reads the counts of the
queues named, gathered over a short settle window, in one round trip. BullMQ skips a NOTIFY
when another commit on the same queue is sending one, so when nothing is heard for
``poll_s`` seconds every queue of the store is re-read (one round trip), and only counts that
changed are sent; the rows and job pages pages watch are read in the same loop (live_rows.py).
While no page anywhere has watched anything for a while (``Watching.idle``), nothing is read.
With a Redis connection, one process per store reads (``shared``): the holder of a
session-level advisory lock, released by PostgreSQL when that process goes away; the others
wait to take over, and the pages of every process get its messages through the channel layer.
Without one (PostgreSQL stores alone) every process reads for its own pages and beats for them
as the Redis follower does: a store serves one listening session per server process, whatever
the number of pages.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import psycopg

from queues.live import protocol as live_protocol
from queues.live.interest import Interest
from queues.live.outbox import Outbox, Publish
from queues.live.protocol import CountsEntry
from queues.live.schedule import Periodic
from queues.live.settings import LiveSettings
from queues.postgres.live_rows import PostgresLiveRows
from queues.postgres.queue_reads import ref_of, summaries
from queues.postgres.urls import parse_postgres_url
from queues.reads.counts import QueueSummary
from queues.reads.discovery import discovered_on
from queues.reads.keys import QueueRef
from queues.reads.pause_reasons import pause_reasons
from queues.redis import connections

log = logging.getLogger("bullpen.live")

_CHANNELS = ("bullmq_events", "bullmq_jobs")


class PostgresLiveCounts:
    def __init__(
        self,
        publish: Publish,
        connection: str,
        *,
        poll_s: float = 5.0,
        settle_s: float = 0.1,
        registry: Interest | None = None,
        shared: bool = True,
    ) -> None:
        """``registry``: what this process's pages watch (the rows and job pages of live_rows.py
        serve every process's pages; this one's count at once). ``shared`` False: this process's
        pages alone, no lock taken."""
        self.connection = connection
        self.shared = shared
        self.poll_s = poll_s
        self.settle_s = settle_s
        self.outbox = Outbox(publish, layer_back=self._resend)
        self.last_sent: dict[QueueRef, CountsEntry] = {}
        self.reasons: dict[QueueRef, str] = {}  # paused queues' reasons, read once a pause
        self.leader = False
        settings = LiveSettings.from_config()
        self.rows = PostgresLiveRows(self.outbox, connection, registry, settings, shared=shared)
        # Watched rows and jobs are read this often, notified or not.
        self.pass_s = min(poll_s, settings.interest_interval)
        # With no Redis follower beating for the pages, this reader does.
        self.heartbeat = None if shared else Periodic(settings.heartbeat_interval)
        self._quiet_since = 0.0

    async def _read_reasons(self, found: list[QueueSummary]) -> None:
        """Why each newly paused queue was paused (the pause action keeps it first): the open
        pages show it beside *paused*. Read once a pause, not on every pass."""
        newly = []
        for summary in found:
            if not summary.paused:
                self.reasons.pop(summary.ref, None)
            elif summary.ref not in self.reasons:
                newly.append(summary.ref)
        if newly:
            kept = await pause_reasons(newly)
            self.reasons.update({ref: kept.get(ref, "") for ref in newly})

    def _resend(self) -> None:
        self.last_sent.clear()  # the pages missed messages: send every count again

    async def run(self) -> None:
        url = parse_postgres_url(connections.url_of(self.connection))
        async with await psycopg.AsyncConnection.connect(
            url.conninfo, autocommit=True, options=f"-c search_path={url.quoted_schema}"
        ) as conn:
            if self.shared:
                await self._lead(conn, url.schema)
            self.leader = True
            for channel in _CHANNELS:
                await conn.execute(f"LISTEN {channel}")
            while True:
                await self.rows.follow()
                if self.rows.watching.idle:
                    await self._rest(conn)
                    continue
                if not self.last_sent:  # the first pass, or the first after a rest
                    self._quiet_since = time.monotonic()
                    await self._send(list((await discovered_on(self.connection)).queues))
                else:
                    await self._send(await self._changed(conn))
                if self.heartbeat is not None and self.heartbeat.due():
                    beat = live_protocol.status_message(True, beat=True, connection=self.connection)
                    self.outbox.emit(("status",), beat)
                await self.outbox.send()

    async def _rest(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """No page anywhere has watched anything for a while: the store is not read, the
        notifications heard are let go, and the counts are read afresh when a page comes."""
        self.last_sent.clear()
        async for _note in conn.notifies(timeout=self.pass_s):
            pass

    async def _lead(self, conn: psycopg.AsyncConnection[Any], schema: str) -> None:
        while True:
            cursor = await conn.execute(
                "SELECT pg_try_advisory_lock(hashtext(%s))", [f"bullpen:live:{schema}"]
            )
            row = await cursor.fetchone()
            if row and row[0]:
                return
            await asyncio.sleep(self.poll_s)

    async def _changed(self, conn: psycopg.AsyncConnection[Any]) -> list[QueueRef]:
        """The queues named by notifications; none heard for ``poll_s``: every queue; none
        heard for a pass: none (the pass then reads the watched queues' events alone)."""
        named: set[str] = set()
        async for note in conn.notifies(timeout=self.pass_s, stop_after=1):
            named.add(note.payload)
        if not named:
            if time.monotonic() - self._quiet_since < self.poll_s:
                return []
            self._quiet_since = time.monotonic()
            return list((await discovered_on(self.connection)).queues)
        self._quiet_since = time.monotonic()
        async for note in conn.notifies(timeout=self.settle_s):
            named.add(note.payload)
        return [ref_of(name, self.connection) for name in sorted(named)]

    async def _send(self, refs: list[QueueRef]) -> None:
        if not refs:
            return
        changed: list[CountsEntry] = []
        found = await summaries(self.connection, refs)
        await self._read_reasons(found)
        for summary in found:
            entry = live_protocol.counts_entry(
                summary.ref.slug,
                summary.ref.name,
                summary.counts,
                summary.paused,
                self.reasons.get(summary.ref),
            )
            if self.last_sent.get(summary.ref) != entry:
                changed.append(entry)
            self.last_sent[summary.ref] = entry
        if not changed:
            return
        overview = [live_protocol.overview_entry(entry) for entry in changed]
        self.outbox.emit(("overview",), live_protocol.overview_counts_message(overview))
        for entry in changed:
            self.outbox.emit(("queue", entry["slug"]), live_protocol.counts_message([entry]))
        await self.outbox.send()
