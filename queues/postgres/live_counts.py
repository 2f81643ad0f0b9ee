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

BullMQ's ``obliterate`` deletes a queue's rows with no notification (only the pause before it
sends one). A queue read with no job and not paused, unlike what was last sent, one that
discovery no longer lists, and every ``poll_s`` the queues open pages show, are asked whether
the store holds anything of them; those it holds nothing of are gone (as the Redis follower
finds them: queues/live/following.py): no longer listed, an overview drops their rows, a queue
page says its queue is gone. A read that fails proves nothing gone.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import psycopg

from queues.config.settings import get_config
from queues.live import protocol as live_protocol
from queues.live.interest import Interest
from queues.live.outbox import Outbox, Publish
from queues.live.protocol import CountsEntry
from queues.live.schedule import Periodic
from queues.live.settings import LiveSettings
from queues.postgres.live_rows import PostgresLiveRows
from queues.postgres.queue_reads import gone, ref_of, summaries
from queues.postgres.urls import parse_postgres_url
from queues.reads import discovery
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
        # The queues open pages show are checked for being gone this often: a busy store's
        # notifications may keep the quiet re-read of every queue away.
        self.shown_check = Periodic(poll_s)
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
                    if self.shown_check.due():
                        await self._drop_gone(self._shown())
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
            listed = (await discovered_on(self.connection)).queues
            # Those discovery no longer lists are read too: gone, or listed again by its scan.
            return [*listed, *(set(self.last_sent) - set(listed))]
        self._quiet_since = time.monotonic()
        async for note in conn.notifies(timeout=self.settle_s):
            named.add(note.payload)
        return [ref_of(name, self.connection) for name in sorted(named)]

    def _shown(self) -> list[QueueRef]:
        """The queues sent whose rows an open overview shows or whose page is open."""
        slugs = self.rows.watching.queues | self.rows.watching.shown
        return [ref for ref in self.last_sent if ref.slug in slugs]

    def _emptied(self, summary: QueueSummary) -> bool:
        """Read with no job and not paused, as it was not last sent: maybe obliterated."""
        if summary.paused or any(summary.counts.values()):
            return False
        sent = self.last_sent.get(summary.ref)
        return sent is None or sent["paused"] or any(sent["counts"].values())

    async def _drop_gone(self, refs: list[QueueRef]) -> set[QueueRef]:
        """Those of ``refs`` the store confirms gone: no longer listed nor sent, the pages told
        (a configured queue is always listed: its counts stay, read as they are)."""
        configured = {QueueRef.from_slug(slug) for slug in get_config()["QUEUES"]}
        found = await gone(self.connection, [ref for ref in refs if ref not in configured])
        if not found:
            return found
        sent = []
        for ref in found:
            discovery.forget(ref)
            self.reasons.pop(ref, None)
            if self.last_sent.pop(ref, None) is not None:
                sent.append(ref.slug)
        if sent:
            message = live_protocol.overview_counts_message([], 0, None, sorted(sent))
            self.outbox.emit(("overview",), message)
        # Every gone queue's page, not only those watched as last read: a page whose watch
        # this pass has not taken yet is told too (a topic nobody watches costs nothing).
        for slug in sorted({ref.slug for ref in found}):
            self.outbox.emit(("queue", slug), live_protocol.gone_message(slug))
        await self.outbox.send()
        return found

    async def _send(self, refs: list[QueueRef]) -> None:
        if not refs:
            return
        changed: list[CountsEntry] = []
        found = await summaries(self.connection, refs)
        dropped = await self._drop_gone([item.ref for item in found if self._emptied(item)])
        found = [item for item in found if item.ref not in dropped]
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
