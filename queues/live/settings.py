"""The live reader's pace and limits: ``BULLPEN["LIVE"]`` overrides any of them by name."""

from __future__ import annotations

from dataclasses import dataclass

from queues.config.settings import get_config


@dataclass
class LiveSettings:
    # Counts move with the events (count_estimate.py); an exact re-read follows an event the
    # estimate cannot follow within counts_interval, and any change within resync_interval.
    counts_interval: float = 0.25
    resync_interval: float = 5.0
    # Least time between the starts of two housekeeping passes: a pass begins as soon as the
    # reader hands it events, unless the last began less than this long ago.
    batch_window: float = 0.02
    # Least time between the starts of two reads of the event streams when the first returned
    # events: a busy stream is read in batches, an event after a quiet spell is read at once.
    # It is most of an update's wait under load; reads cost Redis at most 60 / read_pause
    # commands a minute.
    read_pause: float = 0.03
    # The reader's batch is at least the time this process took to hand the last batch's
    # messages to its pages (rendering and writing them) divided by this share: the sends
    # take at most this share of the process's time, on a quiet machine or a loaded one, and
    # with many pages each gets fewer, larger messages a second.
    send_share: float = 0.5
    # A floor besides it: at least this per watch the leading process's pages hold (0: off).
    read_pause_per_watcher: float = 0.0
    # ... up to this: longer batches were slower to reach 1,000 pages, not faster.
    read_pause_max: float = 0.1
    # With no page open (the reader reads for history only), reads are this far apart.
    unwatched_read_pause: float = 0.1
    # Job hashes read for watched queue pages, per second (the newest changes first); other
    # state changes go out without their hash (the page moves or drops those rows).
    row_reads_per_second: float = 6.0
    full_refresh: float = 30.0
    # Every queue's counts go to the overviews this often, changed or not (else only what
    # changed): a page that missed a message is right again within this long.
    resend_counts: float = 300.0
    # At most this many queues a second are re-read although no event moved them (those not
    # read for full_refresh seconds, the longest unread first): 5 is ~2,400 commands a minute
    # at most, whatever the number of queues.
    quiet_reads_per_second: float = 5.0
    # New queues are looked for this often (through discovery's cache, DISCOVERY_INTERVAL).
    discover_interval: float = 5.0
    logs_interval: float = 1.0
    # Watched queues' active jobs are checked for a lost lock this often (one script call a
    # queue, whatever the number of viewers): an open page flags a stuck job within it.
    stuck_interval: float = 10.0
    interest_interval: float = 1.0
    block_ms: int = 1000
    # Event streams one XREAD names at most: past it they are read in shares of this many,
    # without blocking, every streams.POLL_S while nothing comes (streams.py).
    read_share: int = 10_000
    # Queues one exact read of counts names at most (one round trip): a full refresh reads
    # at most this many unknown queues a pass, the rest in the passes after it.
    exact_batch: int = 2000
    lease_ttl_ms: int = 5000
    # The reader's heartbeat to the pages: pages that miss three mark their figures stale.
    heartbeat_interval: float = 2.0
    # Pages served through a Redis channel layer subscribe again on their own schedule after
    # its Redis comes back (about a second): what is sent before that reaches nobody, so
    # everything is sent again this long after the layer takes messages again.
    layer_resubscribe_grace: float = 3.0
    # While an overview is open, keys a second walked to notice new queues (new_queues.py).
    new_queue_scan_keys: int = 20000
    # With no overview open, one step of that walk this often (for history, which back-fills).
    new_queue_scan_unwatched: float = 10.0
    # The websocket (dashboard/live/consumers.py): watches one socket may hold, sockets one client
    # may keep open in one process, and seconds between checks that its user may still read.
    max_watches: int = 50
    max_sockets_per_client: int = 20
    auth_recheck_interval: float = 30.0

    def pause_for(self, watchers: int, send_seconds: float) -> float:
        """The reader's batch while pages watch: ``watchers`` watches of this process's pages,
        ``send_seconds`` to hand them the last batch's messages."""
        wanted = max(self.read_pause_per_watcher * watchers, send_seconds / self.send_share)
        return max(self.read_pause, min(self.read_pause_max, wanted))

    @classmethod
    def from_config(cls) -> LiveSettings:
        given = get_config().get("LIVE", {}) or {}
        return cls(**{k: v for k, v in given.items() if k in cls.__dataclass_fields__})
