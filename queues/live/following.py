"""Which queues the reader follows: those discovery finds, those a page watches, and those the
new-queue scan sees while an overview is open. A queue is followed from its stream's end, with
its counts read exactly: what came before is in the counts. One that discovery no longer lists
or a whole sweep of the scan did not see, and that Redis confirms gone (obliterated: neither
its meta hash nor its id counter is left), is no longer followed nor listed, and the pages
that show it are told."""

from __future__ import annotations

import math
import time

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from queues.config.settings import get_config
from queues.live import seen_queues
from queues.live.count_changes import LiveCounts
from queues.live.new_queues import NewQueueScanner
from queues.live.outbox import Outbox
from queues.live.protocol import followed_message
from queues.live.status import RedisStatus
from queues.live.streams import StreamReader
from queues.live.watching import Watching
from queues.reads import discovery
from queues.reads.discovery import Discovered, add_seen, discovered_on, known
from queues.reads.keys import QueueRef
from queues.redis import fastpipe

# Queues a queue page watches are checked for being gone this often: two EXISTS
# a watched queue, whatever the number of pages that watch it.
WATCHED_CHECK_S = 5.0


class QueueFollowing:
    def __init__(
        self,
        streams: StreamReader,
        counts: LiveCounts,
        watching: Watching,
        new_queues: NewQueueScanner,
        connection: str,
        status: RedisStatus,
        outbox: Outbox,
    ) -> None:
        self.status = status  # where a refused write is said
        self.connection = connection  # the Redis whose queues are followed
        self.streams = streams
        self.counts = counts
        self.watching = watching
        self.new_queues = new_queues
        self.outbox = outbox
        self._listed: tuple[QueueRef, ...] = ()  # discovery's last list, as last looked at
        self._watched_checked = -math.inf  # when the watched queues were last checked

    async def discovered(self, redis: aioredis.Redis) -> Discovered:
        """Follow queues created since the last look (discovery's cache: no extra SCAN), and
        drop those gone from its list that are gone from Redis."""
        found = await discovered_on(self.connection)
        self.counts.legacy_paused = found.legacy_paused
        if found.queues is not self._listed:
            self._listed = found.queues
            listed = set(found.queues)
            await self._drop_gone(redis, [r for r in self.streams.refs.values() if r not in listed])
        await self._follow(redis, self.streams.unfollowed(found.queues))
        return found

    async def watched(self, redis: aioredis.Redis) -> None:
        """Follow at once a watched queue created since the last full refresh; every
        ``WATCHED_CHECK_S``, drop the watched queues that are gone (no overview's sweep may
        run, and discovery's scan is far off)."""
        now = time.monotonic()
        if now - self._watched_checked >= WATCHED_CHECK_S:
            self._watched_checked = now
            shown = self.watching.queues
            await self._drop_gone(redis, [r for r in self.streams.refs.values() if r.slug in shown])
        following = {ref.slug for ref in self.streams.refs.values()}
        jobs = self.watching.jobs | self.watching.nodes
        wanted = self.watching.queues | {slug for slug, _ in jobs}
        new = []
        for slug in wanted - following:
            try:
                ref = QueueRef.from_slug(slug)
            except Exception:  # noqa: S112 - a page watching a queue that cannot exist
                continue
            if ref.connection == self.connection and await known(ref):
                new.append(ref)
        await self._note_created(redis, new)
        await self._follow(redis, new)

    async def newly_created(self, redis: aioredis.Redis) -> None:
        """Follow queues created since the last look, within a second or two (new_queues.py):
        their counts reach the overviews, which add their rows."""
        seen = await self.new_queues.step(redis)
        following = set(self.streams.refs.values())
        new = [ref for ref in seen if ref not in following]
        await self._note_created(redis, new)
        await self._follow(redis, new)
        swept = self.new_queues.take_swept()
        if swept is not None:
            prefixes = self.new_queues.prefixes
            unseen = [ref for ref in following if ref not in swept and ref.prefix in prefixes]
            await self._drop_gone(redis, unseen)

    async def _drop_gone(self, redis: aioredis.Redis, refs: list[QueueRef]) -> None:
        """Those of ``refs`` Redis says are gone: no longer followed nor listed, and the pages
        told (a configured queue is always listed: its counts stay, read as they are)."""
        configured = {QueueRef.from_slug(slug) for slug in get_config()["QUEUES"]}
        asked = [ref for ref in refs if ref not in configured]
        if not asked:
            return
        keys = [("EXISTS", ref.key(part)) for ref in asked for part in ("meta", "id")]
        found = await fastpipe.execute(redis, keys)
        # A reply that is not 0 (a Cluster master that is down) keeps the queue.
        gone = [ref for i, ref in enumerate(asked) if found[2 * i] == 0 and found[2 * i + 1] == 0]
        if not gone:
            return
        self.streams.unfollow(gone)
        for ref in gone:
            discovery.forget(ref)
        self.counts.drop(gone)
        try:  # every other process stops listing them too
            await seen_queues.note(redis, self.connection, gone, gone=True)
            self.status.accepted("gone queues")
        except ResponseError as error:  # a refused write: this process's list drops them still
            self.status.refused("gone queues", error)

    async def _note_created(self, redis: aioredis.Redis, refs: list[QueueRef]) -> None:
        """Queues the scan has not listed yet are listed at once, in every process (the
        overview's list and ``api/queues/``), before their counts reach the pages."""
        if not refs:
            return
        listed = set((await discovered_on(self.connection)).queues)
        created = [ref for ref in refs if ref not in listed]
        if not created:
            return
        add_seen(self.connection, created)
        try:
            await seen_queues.note(redis, self.connection, created)
            self.status.accepted("new queues")
        except ResponseError as error:  # a refused write: this process lists them still
            self.status.refused("new queues", error)

    async def _follow(self, redis: aioredis.Redis, new: list[QueueRef]) -> None:
        await self.streams.follow(redis, new)
        await self.counts.read_new(new)
        followed = {ref.slug for ref in new if self.streams.follows(ref)}
        for slug in followed & self.watching.queues:
            self.outbox.emit(("queue", slug), followed_message(slug))
        for slug, job_id in self.watching.jobs:
            if slug in followed:
                self.outbox.emit(("job", slug, job_id), followed_message(slug))
