"""The one producer of live updates per deployment.

It follows every queue's BullMQ event stream with a blocking XREAD (resuming from the last id it
saw), and turns events into a few kinds of message for the pages:

* counts of a queue, moved by each event without a Redis read (count_estimate.py) and re-read
  exactly soon after an event the estimate cannot follow, and every ``resync_interval`` while
  the queue changes;
* rows of a watched queue whose jobs changed state (the newest hashes read within a budget of
  ``row_reads_per_second``, the rest sent state-only);
* progress of jobs (from the event itself, no Redis read);
* state, attempts and new log lines of single watched jobs;
* the Redis connection state.

What one pass produces goes out as one message per topic (``{"type": "batch"}`` when there are
several). A slow full refresh (``full_refresh`` seconds) re-reads the counts of queues not read
lately, which catches trimmed streams, new queues, and queues written without events. Only the
process holding the lease reads Redis; how many pages watch changes what is sent, not what is
read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions
from redis.exceptions import ResponseError

from queues import interest, live_protocol
from queues.cancelling import cancel_and_wait, raise_if_cancelled
from queues.conf import get_config
from queues.conf import get_config as _config
from queues.connection import get_client, new_client
from queues.count_estimate import CountEstimates, Effect
from queues.counts import read_summaries
from queues.detail import job_live_view
from queues.discovery import Discovered, discovered, known
from queues.errors import RedisUnavailable
from queues.events import QueueEvent, parse_entry
from queues.keys import QueueRef
from queues.lease import Lease
from queues.listing import fetch_jobs
from queues.live_protocol import CountsEntry, LiveMessage, RowChange, Topic
from queues.new_queues import NewQueueScanner
from queues.sampler import MinuteSampler

log = logging.getLogger("bullpen.live")

Publish = Callable[[Topic, LiveMessage], Awaitable[None]]

REDIS_ERRORS = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    OSError,
    RedisUnavailable,
)


@dataclass
class LiveSettings:
    # Counts move with the events (count_estimate.py); an exact re-read follows an event the
    # estimate cannot follow within counts_interval, and any change within resync_interval.
    counts_interval: float = 0.25
    resync_interval: float = 5.0
    batch_window: float = 0.02
    # Pause after a read that returned events, so that a busy stream is read in batches.
    read_pause: float = 0.1
    # Job hashes read for watched queue pages, per second (the newest changes first); other
    # state changes go out without their hash (the page moves or drops those rows).
    row_reads_per_second: float = 6.0
    full_refresh: float = 30.0
    # New queues are looked for this often (through discovery's cache, DISCOVERY_INTERVAL).
    discover_interval: float = 5.0
    logs_interval: float = 1.0
    interest_interval: float = 1.0
    block_ms: int = 1000
    lease_ttl_ms: int = 5000
    # The reader's heartbeat to the pages: pages that miss three mark their figures stale.
    heartbeat_interval: float = 2.0
    # While an overview is open, keys a second walked to notice new queues (new_queues.py).
    new_queue_scan_keys: int = 20000

    @classmethod
    def from_config(cls) -> LiveSettings:
        given = get_config().get("LIVE", {}) or {}
        return cls(**{k: v for k, v in given.items() if k in cls.__dataclass_fields__})


def counts_entry(ref: QueueRef, counts: dict[str, int], paused: bool) -> CountsEntry:
    """One queue in a ``counts`` message."""
    return live_protocol.counts_entry(ref.slug, ref.name, counts, paused)


def _now_ms() -> int:
    return int(time.time() * 1000)


class Follower:
    def __init__(self, publish: Publish, settings: LiveSettings | None = None) -> None:
        self.publish = publish
        self.settings = settings or LiveSettings.from_config()
        key_prefix = get_config().get("LIVE_KEY_PREFIX", "bullpen")
        self.lease_key = f"{key_prefix}:live:lease"
        self.interest_key = f"{key_prefix}:live:interest"
        self.refs: dict[str, QueueRef] = {}  # events stream key → queue
        self.legacy_paused: frozenset[QueueRef] = frozenset()
        self.last_ids: dict[str, str] = {}
        self.estimates = CountEstimates()
        # Queue → time (ms) of the oldest event that moved its counts and is not yet sent.
        self.moved: dict[QueueRef, int] = {}
        # Queue → time (ms) of the oldest event the estimate could not follow (read soon).
        self.uncertain: dict[QueueRef, int] = {}
        self.resync_at: dict[QueueRef, float] = {}  # queue → when to re-read it exactly
        self.events_taken: dict[QueueRef, int] = {}
        self.counts_read_at: dict[QueueRef, float] = {}
        self.last_counts: dict[QueueRef, CountsEntry] = {}
        self.changed_jobs: dict[QueueRef, dict[str, tuple[str, int]]] = {}
        self.progress: dict[QueueRef, dict[str, tuple[Any, int]]] = {}
        self.row_tokens = 0.0
        self.row_tokens_at = time.monotonic()
        self.watched_queues: set[str] = set()
        self.watched_jobs: set[interest.JobKey] = set()
        self.overview_watched = False
        self.idle_since: float | None = None
        self.log_lengths: dict[interest.JobKey, int] = {}
        self.redis_ok: bool | None = None
        self.layer_ok = True  # the channel layer took the last message
        self._refusals: set[str] = set()  # writes Redis refused, reported once each
        self.leader = False
        self.wake = asyncio.Event()
        self.sampler = MinuteSampler()
        self._lease: Lease | None = None
        self._reader_client: aioredis.Redis | None = None
        self._due: dict[str, float] = {}
        # Messages of one housekeeping pass, sent as one websocket message per topic.
        self._outbox: dict[Topic, list[LiveMessage]] = {}
        self._new_queues = NewQueueScanner(
            list(_config()["PREFIXES"]), self.settings.new_queue_scan_keys
        )

    IDLE_AFTER = 30.0

    @property
    def idle(self) -> bool:
        """No page anywhere has watched anything for IDLE_AFTER seconds."""
        return self.idle_since is not None and time.monotonic() - self.idle_since > self.IDLE_AFTER

    # ---- public -------------------------------------------------------------------------

    def snapshot(self) -> LiveMessage | None:
        """Last known counts of every queue (no Redis read), for a page that just connected."""
        if not self.last_counts:
            return None
        return live_protocol.counts_message(list(self.last_counts.values()))

    async def run(self) -> None:
        reader = asyncio.ensure_future(self._read_forever())
        try:
            await self._housekeep_forever()
        finally:
            await cancel_and_wait(reader)
            await self._close()

    # ---- reading the streams -------------------------------------------------------------

    async def _read_forever(self) -> None:
        while True:
            raise_if_cancelled()
            if not self.leader or not self.refs or self.idle:
                await asyncio.sleep(0.2)
                continue
            try:
                if self._reader_client is None:
                    self._reader_client = new_client(blocking=True)
                streams: dict[Any, Any] = {key: self.last_ids.get(key, "$") for key in self.refs}
                reply: Any = await self._reader_client.xread(
                    streams, count=1000, block=self.settings.block_ms
                )
            except REDIS_ERRORS as error:
                await self._reset_reader()
                await self._set_redis_ok(False, str(error))
                await asyncio.sleep(1)
                continue
            for stream_key, entries in reply or []:
                ref = self.refs.get(stream_key)
                if ref is None:
                    continue
                for stream_id, fields in entries:
                    self.last_ids[stream_key] = stream_id
                    self._take(ref, parse_entry(stream_id, fields))
            if reply:
                self.wake.set()
                await asyncio.sleep(self.settings.read_pause)

    def _take(self, ref: QueueRef, event: QueueEvent) -> None:
        at = event.at_ms
        if event.event == "progress":
            if event.job_id:
                self.progress.setdefault(ref, {})[event.job_id] = (event.progress(), at)
            return
        self.sampler.add(ref, event.event, at)
        self.events_taken[ref] = self.events_taken.get(ref, 0) + 1
        effect = self.estimates.apply(ref, event)
        if effect is not Effect.NONE:
            self.moved.setdefault(ref, at)
            self.resync_at.setdefault(ref, time.monotonic() + self.settings.resync_interval)
        if effect is Effect.UNCERTAIN:
            self.uncertain.setdefault(ref, at)
        if event.job_id:
            state = event.new_state or ("removed" if event.event == "removed" else None)
            if state:
                self.changed_jobs.setdefault(ref, {})[event.job_id] = (state, at)

    async def _reset_reader(self) -> None:
        if self._reader_client is not None:
            with contextlib.suppress(Exception):
                await self._reader_client.aclose()
        self._reader_client = None

    # ---- housekeeping and flushing ---------------------------------------------------------

    def _due_now(self, name: str, every: float) -> bool:
        now = time.monotonic()
        if now >= self._due.get(name, 0):
            self._due[name] = now + every
            return True
        return False

    async def _housekeep_forever(self) -> None:
        while True:
            raise_if_cancelled()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.25):
                    await self.wake.wait()
            self.wake.clear()
            try:
                await self._housekeep()
                await self._send_outbox()
            except ResponseError as error:
                # A refused command (maxmemory, a script error): Redis itself is there.
                self._outbox.clear()
                self._refused("live update", error)
                await asyncio.sleep(1)
            except REDIS_ERRORS as error:
                self._outbox.clear()
                self.leader = False
                self._due.clear()
                await self._set_redis_ok(False, str(error))
                await asyncio.sleep(1)
            except Exception:  # a bug must not end live updates for everyone
                self._outbox.clear()
                log.exception("live update failed")
                await asyncio.sleep(1)
            await asyncio.sleep(self.settings.batch_window)

    async def _housekeep(self) -> None:
        redis = get_client()
        if self._lease is None:
            self._lease = Lease(redis, self.lease_key, self.settings.lease_ttl_ms)
        if self._due_now("lease", self.settings.lease_ttl_ms / 3000):
            was_leader = self.leader
            self.leader = await self._lease.acquire_or_renew()
            if self._lease.unwritten:
                self._refused(
                    "lease", "Redis refuses writes; reading while no other reader is known"
                )
            else:
                self._accepted("lease")
            await self._set_redis_ok(True)
            if self.leader and not was_leader:
                log.info("live updates: this process now reads the event streams")
                self._restart_streams()
        if interest.local.changed or self._due_now("interest-publish", 5.0):
            # What this process's pages watch; refused under maxmemory, when only this
            # process's own pages are served (they count locally below).
            try:
                await interest.publish(redis, self.interest_key, self._lease.owner, interest.local)
                self._accepted("interest")
            except ResponseError as error:
                self._refused("interest", error)
        if not self.leader:
            return
        if self._due_now("beat", self.settings.heartbeat_interval):
            self._emit(("status",), live_protocol.status_message(True, beat=True))
        if self._due_now("watchers", self.settings.interest_interval):
            watched = await interest.read_all(redis, self.interest_key)
            self.watched_queues, self.watched_jobs, self.overview_watched = watched
            if self.watched_queues or self.watched_jobs or self.overview_watched:
                if self.idle:
                    self._restart_streams()
                self.idle_since = None
            elif self.idle_since is None:
                self.idle_since = time.monotonic()
        # This process's own pages count at once, not after the next exchange of interest.
        local = interest.local
        if not local.empty:
            self.watched_queues.update(local.queues)
            self.watched_jobs.update(local.jobs)
            self.overview_watched = self.overview_watched or local.overview > 0
            self.idle_since = None
        if self.idle:
            return  # nobody watches any page: read nothing until someone does
        if self._due_now("full", self.settings.full_refresh):
            await self._full_refresh(redis)
        elif self._due_now("discover", self.settings.discover_interval):
            await self._follow_discovered(redis)
        elif self._due_now("adopt", 1.0):
            await self._adopt_watched(redis)
            if self.overview_watched:
                await self._adopt_new_queues(redis)
        self._flush_progress()
        await self._flush_rows()
        await self._flush_counts()
        if self._due_now("samples", 5.0):
            try:
                await self.sampler.flush(redis, _now_ms())
                self._accepted("samples")
            except ResponseError as error:
                self._refused("samples", error)
        if self.watched_jobs and self._due_now("logs", self.settings.logs_interval):
            await self._flush_logs(redis)

    def _restart_streams(self) -> None:
        """After a time of not reading (idle, or another process held the lease): start again
        from the streams' ends, with fresh counts, rather than replay what the counts hold."""
        self.refs.clear()
        self.last_ids.clear()
        self.changed_jobs.clear()
        self.estimates.clear()
        self.moved.clear()
        self.uncertain.clear()
        self.resync_at.clear()
        self._due.pop("full", None)

    def _emit(self, topic: Topic, message: LiveMessage) -> None:
        self._outbox.setdefault(topic, []).append(message)

    async def _send_outbox(self) -> None:
        """One websocket message per topic per pass: a page gets a few messages a second
        however busy the queues are, which is what keeps hundreds of viewers cheap."""
        outbox, self._outbox = self._outbox, {}
        for topic, messages in outbox.items():
            message = messages[0] if len(messages) == 1 else live_protocol.batch_message(messages)
            if not await self._publish(topic, message):
                return  # the channel layer is away: what is left goes stale, resent on return

    async def _adopt_watched(self, redis: aioredis.Redis) -> None:
        """Follow at once a watched queue created since the last full refresh."""
        following = {ref.slug for ref in self.refs.values()}
        wanted = self.watched_queues | {slug for slug, _ in self.watched_jobs}
        new = []
        for slug in wanted - following:
            try:
                ref = QueueRef.from_slug(slug)
            except Exception:  # noqa: S112 - a page watching a queue that cannot exist
                continue
            if await known(ref):
                new.append(ref)
        await self._follow(redis, new)
        await self._read_exact(new)

    async def _adopt_new_queues(self, redis: aioredis.Redis) -> None:
        """Follow queues created since the last look, within a second or two (new_queues.py):
        their counts reach the overviews, which add their rows."""
        seen = await self._new_queues.step(redis)
        following = set(self.refs.values())
        new = [ref for ref in seen if ref not in following]
        await self._follow(redis, new)
        await self._read_exact(new)

    async def _follow_discovered(self, redis: aioredis.Redis) -> Discovered:
        """Follow queues created since the last look (discovery's cache: no extra SCAN)."""
        found = await discovered()
        self.legacy_paused = found.legacy_paused
        new = [ref for ref in found.queues if ref.key("events") not in self.refs]
        await self._follow(redis, new)
        await self._read_exact(new)
        return found

    async def _follow(self, redis: aioredis.Redis, new: list[QueueRef]) -> None:
        """Follow ``new`` queues' streams from their current ends: what came before is in
        the counts."""
        if not new:
            return
        async with redis.pipeline(transaction=False) as pipe:
            for ref in new:
                pipe.xrevrange(ref.key("events"), count=1)
            tails = await pipe.execute(raise_on_error=False)
        for ref, tail in zip(new, tails, strict=True):
            last = tail[0][0] if isinstance(tail, list) and tail else "0-0"
            self.last_ids[ref.key("events")] = last
            self.refs[ref.key("events")] = ref

    async def _full_refresh(self, redis: aioredis.Redis) -> None:
        found = await self._follow_discovered(redis)
        gone = set(self.last_counts) - set(found.queues)
        for ref in gone:
            self.last_counts.pop(ref, None)
            self.estimates.forget(ref)
        # Queues read exactly within the resync interval are fresh enough already.
        now = time.monotonic()
        stale = [
            ref
            for ref in found.queues
            if now - self.counts_read_at.get(ref, 0) >= self.settings.resync_interval
            or not self.estimates.known(ref)
        ]
        await self._read_exact(stale)
        # Everything, changed or not: pages served by processes that do not read Redis have
        # no snapshot of their own.
        self._publish_counts(list(found.queues), 0, everything=True)

    async def _flush_counts(self) -> None:
        now = time.monotonic()
        due = {
            ref
            for ref in self.uncertain
            if now - self.counts_read_at.get(ref, 0) >= self.settings.counts_interval
        }
        due.update(ref for ref, at in self.resync_at.items() if at <= now)
        if due:
            await self._read_exact(list(due))
        if self.moved:
            moved, self.moved = self.moved, {}
            self._publish_counts(list(moved), min(moved.values()))

    async def _read_exact(self, refs: list[QueueRef]) -> None:
        """Re-read ``refs``' counts, make them the estimates' new base, and send what changed."""
        if not refs:
            return
        taken = {ref: self.events_taken.get(ref, 0) for ref in refs}
        summaries = await read_summaries(refs, self.legacy_paused)
        now = time.monotonic()
        for item in summaries:
            ref = item.ref
            self.estimates.set_exact(ref, item.counts, item.paused, ref in self.legacy_paused)
            self.counts_read_at[ref] = now
            self.uncertain.pop(ref, None)
            if self.events_taken.get(ref, 0) != taken[ref]:
                # Events came in while reading: the read may or may not hold them.
                self.resync_at[ref] = now + self.settings.resync_interval
            else:
                self.resync_at.pop(ref, None)
        # The oldest event these counts are the first to show (0: a resync shows no new event).
        pending = [self.moved.pop(item.ref) for item in summaries if item.ref in self.moved]
        self._publish_counts([item.ref for item in summaries], min(pending, default=0))

    def _publish_counts(
        self, refs: list[QueueRef], event_at: int, *, everything: bool = False
    ) -> None:
        """``event_at``: when the oldest event behind these counts was written (0: none)."""
        changed = []
        for ref in refs:
            if not self.estimates.known(ref):
                continue
            entry = counts_entry(ref, self.estimates.counts(ref), self.estimates.paused(ref))
            if everything or self.last_counts.get(ref) != entry:
                changed.append(entry)
            self.last_counts[ref] = entry
        if not changed:
            return
        self._emit(("overview",), live_protocol.counts_message(changed, event_at))
        for entry in changed:
            if entry["slug"] in self.watched_queues:
                self._emit(
                    ("queue", entry["slug"]), live_protocol.counts_message([entry], event_at)
                )

    def _flush_progress(self) -> None:
        pending, self.progress = self.progress, {}
        for ref, jobs in pending.items():
            updates: list[live_protocol.ProgressUpdate] = [
                {"id": job_id, "progress": value, "at": at} for job_id, (value, at) in jobs.items()
            ]
            if ref.slug in self.watched_queues:
                self._emit(
                    ("queue", ref.slug), live_protocol.progress_message(ref.slug, updates, "queue")
                )
            for update in updates:
                if (ref.slug, update["id"]) in self.watched_jobs:
                    self._emit(
                        ("job", ref.slug, update["id"]),
                        live_protocol.progress_message(ref.slug, [update], "job"),
                    )

    ROW_READ_BATCH = 3

    def _take_row_tokens(self, wanted: int) -> int:
        """Job hashes this pass may read for queue pages (a token bucket of one second), in
        batches of a few: each read is a script call of its own."""
        now = time.monotonic()
        rate = self.settings.row_reads_per_second
        self.row_tokens = min(rate, self.row_tokens + (now - self.row_tokens_at) * rate)
        self.row_tokens_at = now
        if self.row_tokens < min(wanted, self.ROW_READ_BATCH):
            return 0
        granted = min(wanted, int(self.row_tokens))
        self.row_tokens -= granted
        return granted

    async def _flush_rows(self) -> None:
        cap = int(get_config()["LIST_FIELD_CAP"])
        for ref in list(self.changed_jobs):
            jobs = self.changed_jobs.pop(ref)
            # A watched job's page gets its state as Redis holds it now, read after the event.
            for job_id in jobs:
                if (ref.slug, job_id) in self.watched_jobs:
                    view = await job_live_view(ref, job_id)
                    self._emit(("job", ref.slug, job_id), live_protocol.job_message(ref.slug, view))
            if ref.slug not in self.watched_queues:
                continue
            # Read the newest changes within the budget; the rest go out state-only.
            live = [job_id for job_id, (state, _) in jobs.items() if state != "removed"]
            granted = self._take_row_tokens(len(live))
            to_read = live[len(live) - granted :] if granted else []
            fetched = await fetch_jobs(ref, to_read, cap) if to_read else []
            rows = {row["id"]: row for row in fetched}
            out: list[RowChange] = []
            removed: list[live_protocol.Removal] = []
            for job_id, (state, at) in jobs.items():
                row = rows.get(job_id)
                if state == "removed" or (row is None and job_id in to_read):
                    removed.append({"id": job_id, "at": at})
                elif row is None:
                    out.append({"id": job_id, "state": state, "at": at})
                else:
                    row["state"] = state
                    out.append({"id": job_id, "state": state, "at": at, "job": row})
            self._emit(("queue", ref.slug), live_protocol.rows_message(ref.slug, out, removed))

    async def _flush_logs(self, redis: aioredis.Redis) -> None:
        watched = sorted(self.watched_jobs)
        refs = {}
        for slug, job_id in watched:
            try:
                refs[(slug, job_id)] = QueueRef.from_slug(slug)
            except Exception:  # noqa: S112 - a page asked for a queue that does not exist
                continue
        keys = list(refs)
        async with redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.llen(refs[key].job_key(key[1]) + ":logs")
            lengths = await pipe.execute(raise_on_error=False)
        grown = []
        for key, length in zip(keys, lengths, strict=True):
            if not isinstance(length, int):
                continue
            known = self.log_lengths.get(key)
            self.log_lengths[key] = length
            if known is not None and length > known:
                grown.append((key, known, length))
        for key in set(self.log_lengths) - set(keys):
            del self.log_lengths[key]
        if not grown:
            return
        async with redis.pipeline(transaction=False) as pipe:
            for key, known, length in grown:
                pipe.lrange(refs[key].job_key(key[1]) + ":logs", known, length - 1)
            chunks = await pipe.execute(raise_on_error=False)
        for (key, known, _), lines in zip(grown, chunks, strict=True):
            if isinstance(lines, list):
                self._emit(("job", *key), live_protocol.logs_message(key[0], key[1], known, lines))

    async def _set_redis_ok(self, ok: bool, detail: str = "") -> None:
        if self.redis_ok is ok:
            return
        self.redis_ok = ok
        if ok:
            self._due.pop("full", None)  # recovered: re-read everything at once
        else:
            self.last_counts.clear()
            self.estimates.clear()
            log.warning("live updates: Redis unreachable: %s", detail)
        await self._publish(("status",), live_protocol.status_message(ok, detail))

    async def _publish(self, topic: Topic, message: LiveMessage) -> bool:
        """Hand a message to the channel layer; its failure is the layer's, never the queues'
        Redis's, and never ends live updates."""
        try:
            await self.publish(topic, message)
        except Exception as error:  # any layer's error: in-memory, Redis, or a custom one
            if self.layer_ok:
                log.warning("live updates: the channel layer refused a message: %r", error)
            self.layer_ok = False
            return False
        if not self.layer_ok:
            log.info("live updates: the channel layer takes messages again")
            self.layer_ok = True
            self._due.pop("full", None)  # pages missed messages: send them everything
        return True

    def _refused(self, what: str, error: object) -> None:
        """Redis refused a write (e.g. maxmemory): said once, not on every pass."""
        if what not in self._refusals:
            self._refusals.add(what)
            log.warning("live updates: Redis refused the %s write: %s", what, error)

    def _accepted(self, what: str) -> None:
        if what in self._refusals:
            self._refusals.discard(what)
            log.info("live updates: Redis takes the %s write again", what)

    async def _close(self) -> None:
        await self._reset_reader()
        if self._lease is not None:
            with contextlib.suppress(*REDIS_ERRORS):
                await self._lease.release()
