"""The one producer of live updates per deployment.

It follows every queue's BullMQ event stream with a blocking XREAD (resuming from the last id it
saw), and turns events into a few kinds of message for the pages:
* counts of a queue, moved by each event without a Redis read (count_estimate.py) and re-read
  exactly soon after an event the estimate cannot follow, and as it changes (count_changes.py);
* rows of a watched queue whose jobs changed state (the newest hashes read within a budget of
  ``row_reads_per_second``, the rest sent state-only);
* progress (from the event, no Redis read); state, attempts and log lines of watched jobs;
  the Redis connection state.

What one pass produces goes out as one message per topic (``{"type": "batch"}`` when there are
several). A full refresh (``full_refresh`` s) finds new queues; queues without events are re-read
from a fixed budget a second (count_changes.py), at a cost flat in their number. Only the lease
holder reads Redis; how many pages watch changes what is sent, not what is read; with no page
open, only what history needs is read. The ``Follower`` below runs queues/live/'s parts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Iterable

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from queues.cancelling import cancel_and_wait, finish_despite_cancel, raise_if_cancelled
from queues.config.settings import get_config
from queues.handover.summaries import SummaryHandover
from queues.history.recorder import HistoryRecorder
from queues.live import protocol as live_protocol
from queues.live.count_changes import LiveCounts
from queues.live.events import QueueEvent
from queues.live.following import QueueFollowing
from queues.live.interest import Interest
from queues.live.leadership import Leadership
from queues.live.log_lines import LogTails
from queues.live.new_queues import NewQueueScanner
from queues.live.outbox import BatchSendTime, Outbox, Publish, SendTime
from queues.live.progress import ProgressUpdates
from queues.live.protocol import LiveMessage
from queues.live.rows import RowChanges, StuckChecks
from queues.live.schedule import Chores, Later, Periodic
from queues.live.settings import LiveSettings
from queues.live.status import REDIS_ERRORS, RedisStatus
from queues.live.streams import StreamReader
from queues.live.watching import Watching
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.redis.clients import close_client, get_client, new_client
from queues.redis.connections import own_key_prefix
from queues.throughput.sampler import MinuteSampler

log = logging.getLogger("bullpen.live")

# Seconds beyond a read's wait and pause within which the reader must have caught up to count
# as current, for its counts to go to a view or a socket (then sent every change it takes after
# them): a loaded reader's rounds take seconds, reading 50,000 queues instead tens of seconds.
READER_SLACK = 1.0
VIEW_LAG = 10.0


class Follower:
    def __init__(
        self,
        publish: Publish,
        registry: Interest,
        settings: LiveSettings | None = None,
        connection: str | None = None,
        send_time: SendTime | None = None,
    ) -> None:
        """``registry``: what this process's pages watch (its websocket consumers write it);
        ``connection``: the Redis whose queues it follows (None: the default one), with its
        own follower, lease and watcher lists; ``send_time``: what sending to pages takes."""
        self.settings = s = settings or LiveSettings.from_config()
        self.connection = connection or connections.default_name()
        key_prefix = own_key_prefix(self.connection)
        self.wake = asyncio.Event()
        self.pass_began = -math.inf  # when the last housekeeping pass began (monotonic)
        self.chores = Chores(
            renew_lease=Periodic(s.lease_ttl_ms / 3000),
            publish_interest=Periodic(5.0),
            heartbeat=Periodic(s.heartbeat_interval),
            read_interest=Periodic(s.interest_interval),
            full_refresh=Periodic(s.full_refresh),
            resend_counts=Periodic(s.resend_counts),
            discover=Periodic(s.discover_interval),
            adopt=Periodic(1.0),
            scan_unwatched=Periodic(s.new_queue_scan_unwatched),
            flush_samples=Periodic(5.0),
            tail_logs=Periodic(s.logs_interval),
            check_stuck=Periodic(s.stuck_interval),
            resend_again=Later(),
        )
        self.status = RedisStatus()
        self._probe: aioredis.Redis | None = None
        self.outbox = Outbox(publish, layer_back=self._layer_back)
        self.send_time = BatchSendTime(send_time or SendTime())
        self.leadership = Leadership(
            registry,
            lease_key=f"{key_prefix}:live:lease",
            interest_key=f"{key_prefix}:live:interest",
            lease_ttl_ms=s.lease_ttl_ms,
            status=self.status,
        )
        self.watching = Watching(self.connection)
        self.streams = StreamReader(s.block_ms, s.read_pause, self.connection, s.read_share)
        self.counts = LiveCounts(
            self.outbox,
            self.watching,
            s.counts_interval,
            s.resync_interval,
            s.quiet_reads_per_second,
            quiet_after=s.full_refresh,
            batch=s.exact_batch,
        )
        self.handover = SummaryHandover(self.counts, self.streams)  # kept between views
        self.rows = RowChanges(self.outbox, self.watching, s.row_reads_per_second)
        self.stuck = StuckChecks(self.outbox, self.watching, self.connection)
        self.progress = ProgressUpdates(self.outbox, self.watching)
        self.logs = LogTails(self.outbox, self.watching)
        self.sampler = MinuteSampler(lambda: bool(self.streams.refs), self.connection)
        # Job history (queues/history/): recorded, so read, whether or not a page is open.
        self.history = HistoryRecorder() if get_config()["HISTORY_RECORDING"] else None
        self.record_history = Periodic(1.0)
        scanner = NewQueueScanner(
            list(get_config()["PREFIXES"]), s.new_queue_scan_keys, self.connection
        )
        self.following = QueueFollowing(
            self.streams,
            self.counts,
            self.watching,
            scanner,
            self.connection,
            self.status,
            self.outbox,
        )

    @property
    def leader(self) -> bool:
        """This process holds the lease: it reads Redis for every process's pages."""
        return self.leadership.leader

    @property
    def probe(self) -> aioredis.Redis:
        """The lease's client: not retried, so pages learn at once that Redis is away."""
        if self._probe is None:
            self._probe = new_client(connection=self.connection, retries=False)
        return self._probe

    @property
    def redis_ok(self) -> bool | None:
        return self.status.ok

    @property
    def current(self) -> bool:
        """The counts this process holds are Redis's now, give or take the last moment's
        events: it surely holds the lease, Redis answers, and its reader has read everything
        the streams held within a read's time. A process paused longer than the lease (a stop
        signal, a long collection, a stalled VM) or one that does not read holds old ones."""
        return self.current_within(READER_SLACK)

    def current_within(self, slack: float) -> bool:
        ok = self.leadership.holds() and self.status.ok is True
        return ok and self.streams.caught_up_within(slack)

    def snapshot(self, slug: str | None = None, version: str | None = None) -> LiveMessage | None:
        """Last known counts (no Redis read) for a page that just connected: every queue's for
        an overview, or only ``slug``'s; only those changed since ``version`` when the page
        was rendered from this reader's counts (queues/live/count_changes.py); None unless
        current within ``VIEW_LAG`` (the page then reads Redis)."""
        if not self.current_within(VIEW_LAG):
            return None
        if slug is None:
            return self.counts.snapshot(version)
        return self.counts.snapshot_of(slug, version)

    def known_summaries(
        self, refs: Iterable[QueueRef]
    ) -> tuple[dict[QueueRef, QueueSummary], str | None]:
        """The summaries of ``refs`` this reader keeps true (no Redis read), for a page that
        reads only the others, and the version of the counts sent, which its socket resumes
        from. None while not current within ``VIEW_LAG``, not reading, or a Cluster master's
        streams are lost (the page then reads all and names what it could not read)."""
        if not (self.current_within(VIEW_LAG) and self._may_read()) or self.streams.lost:
            return {}, None
        slack = self.settings.counts_interval + READER_SLACK
        return self.handover.summaries(refs, slack), self.counts.version

    async def run(self) -> None:
        reader = asyncio.ensure_future(
            self.streams.read_forever(self._may_read, self._take, self._read_failed, self.wake)
        )
        keeper = asyncio.ensure_future(self.leadership.keep_alive(self.probe))
        try:
            await self._housekeep_forever()
        finally:
            await finish_despite_cancel(self._stop_parts(keeper, reader))

    async def _stop_parts(self, *parts: asyncio.Future[None]) -> None:
        try:
            await cancel_and_wait(*parts)
            await self.leadership.release()
        finally:  # also when given up past its bound: an open client outlives its event loop
            await self.streams.reset()
            if self._probe is not None:
                with contextlib.suppress(Exception):
                    await close_client(self._probe)

    def _may_read(self) -> bool:
        return self.leader and (self.history is not None or not self.watching.idle)

    def _take(self, ref: QueueRef, event: QueueEvent) -> None:
        if event.event == "progress":
            self.progress.take(ref, event)
            return
        self.sampler.add(ref, event.event, event.at_ms)
        if self.history is not None:
            self.history.take(ref, event)
        self.counts.take(ref, event)
        self.rows.take(ref, event)

    async def _read_failed(self, detail: str) -> None:
        await self._set_redis_ok(False, detail)

    # ---- housekeeping ----------------------------------------------------------------------

    async def _housekeep_forever(self) -> None:
        while True:
            raise_if_cancelled()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.25):
                    await self.wake.wait()
            # Only the rest of the batch window since the last pass began: events after a
            # quiet spell are sent at once, a busy stream's in batches.
            await asyncio.sleep(self._rest_of_window())
            self.pass_began = time.monotonic()
            self.wake.clear()
            try:
                await self._housekeep()
                await self.outbox.send()
            except ResponseError as error:
                # A refused command (maxmemory, a script error): Redis itself is there.
                self.outbox.clear()
                self.status.refused("live update", error)
                await asyncio.sleep(1)
            except REDIS_ERRORS as error:
                self.outbox.clear()
                self.leadership.leader = False
                self.chores.hurry_all()
                await self._set_redis_ok(False, str(error))
                await asyncio.sleep(1)
            except Exception:  # a bug must not end live updates for everyone
                self.outbox.clear()
                log.exception("live update failed")
                await asyncio.sleep(1)

    def _read_pause(self) -> float:
        """The reader's batch (once a pass): short while pages watch, longer the longer this
        process takes to send them an update, and longer still when it reads for history."""
        s = self.settings
        if self.watching.idle:
            return max(s.read_pause, s.unwatched_read_pause)
        return s.pause_for(self.leadership.registry.watchers, self.send_time.last_batch())

    def _rest_of_window(self) -> float:
        return max(0.0, self.settings.batch_window - (time.monotonic() - self.pass_began))

    async def _housekeep(self) -> None:
        redis = get_client(self.connection)
        chores, leadership, watching = self.chores, self.leadership, self.watching
        if chores.renew_lease.due():
            was_leader = leadership.leader
            became_leader = await leadership.renew(self.probe)
            await self._set_redis_ok(True)
            if became_leader:
                log.info("live updates: this process now reads the event streams")
                self._restart_streams()
            elif was_leader and not leadership.leader:
                log.info("live updates: another process reads the event streams now")
                self.counts.forget_sent()
                if self.history is not None:
                    self.history.forget()
        if leadership.registry.changed or chores.publish_interest.due():
            await leadership.publish_interest(redis)
        if not self.leader:
            return
        if chores.heartbeat.due():
            beat = live_protocol.status_message(
                True, beat=True, connection=self.connection, partly=self.streams.lost
            )
            self.outbox.emit(("status",), beat)
        if chores.read_interest.due():
            woke = watching.everywhere(await leadership.read_interest(redis))
            if woke and self.history is None:
                self._restart_streams()
            elif woke:  # streams read all along (history): read afresh what may have drifted
                self.counts.doubt_drifted()
                self._send_everything_soon()
        # This process's own pages count at once, not after the next exchange of interest.
        watching.add_own(leadership.registry)
        self.streams.read_pause = self._read_pause()
        if watching.idle:
            if self.history is not None:
                await self._record_unwatched(redis)
            return  # nobody watches any page: read no counts until someone does
        if chores.resend_again.due():
            self._send_everything_soon()
        if chores.full_refresh.due():
            found = await self.following.discovered(redis)
            everything = chores.resend_counts.due()
            await self.counts.refresh_all(list(found.queues), everything=everything)
        elif chores.discover.due():
            await self.following.discovered(redis)
        elif chores.adopt.due():
            await self.following.watched(redis)
            # New queues: looked for every second while an overview is open, else now and then.
            unwatched = self.history is not None and chores.scan_unwatched.due()
            if watching.overview or unwatched:
                await self.following.newly_created(redis)
        self.progress.flush()
        await self.rows.flush()
        await self.counts.flush()
        await self.counts.verify_quiet()
        # The pages' updates go out before the chores that write (history, samples, stuck
        # checks): a pass that runs them would hold the updates for their round trips.
        await self.outbox.send()
        await self._samples_and_history(redis)
        if watching.jobs and chores.tail_logs.due():
            await self.logs.flush(redis)
        if chores.check_stuck.due():
            await self.stuck.check(self.probe)

    async def _record_unwatched(self, redis: aioredis.Redis) -> None:
        """Nobody watches: only what history and the last hour's samples need; no counts are
        read or sent (the rows and progress taken are dropped, unread)."""
        if self.chores.discover.due():
            await self.following.discovered(redis)
        if self.chores.scan_unwatched.due():
            await self.following.newly_created(redis)
        self.progress.flush()
        await self.rows.flush()
        await self._samples_and_history(redis)

    async def _samples_and_history(self, redis: aioredis.Redis) -> None:
        now_ms = int(time.time() * 1000)
        for kind, due, write in (
            ("samples", self.chores.flush_samples, lambda: self.sampler.flush(redis, now_ms)),
            ("history", self.record_history, lambda: self._record_history(redis, now_ms)),
        ):
            if (kind == "samples" or self.history is not None) and due.due():
                try:
                    await write()
                    self.status.accepted(kind)
                except ResponseError as error:
                    self.status.refused(kind, error)

    def _restart_streams(self) -> None:
        """After a time of not reading (idle, or another process held the lease): start again
        from the streams' ends, with fresh counts, rather than replay what the counts hold."""
        self.streams.forget_all()
        self.sampler.restart()
        if self.history is not None:
            self.history.restart()
        self.rows.clear()
        self.counts.restart()
        self._send_everything_soon()

    def _layer_back(self) -> None:  # the channel layer takes messages again: pages missed some
        self._send_everything_soon()
        self.chores.resend_again.arm(self.settings.layer_resubscribe_grace)

    def _send_everything_soon(self) -> None:
        """Pages may have missed counts (a new reader, Redis or the channel layer back): read
        and send every queue's at once."""
        self.chores.full_refresh.hurry()
        self.chores.resend_counts.hurry()

    async def _record_history(self, redis: aioredis.Redis, now_ms: int) -> None:
        assert self.history is not None
        await self.history.flush(redis, self.streams.refs.values(), now_ms)

    async def _set_redis_ok(self, ok: bool, detail: str = "") -> None:
        if not self.status.change(ok, detail):
            return
        if ok:
            # Recovered: the counts are kept if the same server answers (the streams are read
            # on from where they stood); 50,000 queues' counts take minutes to read again.
            if not await self.status.same_server(self.probe):
                self.counts.forget_sent()
            self._send_everything_soon()
        status = live_protocol.status_message(
            ok, detail, connection=self.connection, partly=self.streams.lost
        )
        await self.outbox.publish(("status",), status)
