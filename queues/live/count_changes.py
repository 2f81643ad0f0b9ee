"""Live counts: moved by each event without a Redis read (count_estimate.py), re-read exactly
soon after an event the estimate cannot follow, and every ``resync_interval`` while the queue
changes; only what changed goes out. Queues without events (a hand edit, a trimmed stream, a
writer that sends none) are re-read ``quiet_after`` seconds after their last read, at most
``quiet_reads_per_second`` of them, the longest unread first (open overviews' rows first), and
watched queues at every full refresh on top of it."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import secrets
import time
from collections.abc import Iterable

from queues.live import protocol as live_protocol
from queues.live.count_estimate import CountEstimates, Effect
from queues.live.events import QueueEvent
from queues.live.outbox import Outbox
from queues.live.protocol import ConnectionTotals, CountsEntry, LiveMessage
from queues.live.schedule import TokenBucket
from queues.live.watching import Watching, refs_of
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef
from queues.reads.pause_reasons import pause_reasons
from queues.reads.positioned_counts import Positioned, read_positioned

SLICE = 2000  # queues a full refresh compares and sends in one step of the loop


class LiveCounts:
    def __init__(
        self,
        outbox: Outbox,
        watching: Watching,
        counts_interval: float,
        resync_interval: float,
        quiet_reads_per_second: float = 5.0,
        quiet_after: float = 30.0,
        batch: int = 2000,
    ) -> None:
        self.outbox = outbox
        self.watching = watching
        # Exact re-reads: soon after an event the estimate cannot follow, and after any change.
        self.counts_interval, self.resync_interval = counts_interval, resync_interval
        self.estimates = CountEstimates()
        self.legacy_paused: frozenset[QueueRef] = frozenset()
        # Queue → time (ms) of the oldest event that moved its counts and is not yet sent.
        self.moved: dict[QueueRef, int] = {}
        # Queue → time (ms) of the oldest event the estimate could not follow (read soon).
        self.uncertain: dict[QueueRef, int] = {}
        self.resync_at: dict[QueueRef, float] = {}  # queue → when to re-read it exactly
        self.events_taken: dict[QueueRef, int] = {}
        self.read_at: dict[QueueRef, float] = {}
        self.last_sent: dict[QueueRef, CountsEntry] = {}
        # Each queue's last exact read whole (meta: limits, version), for pages served from it.
        self.summaries: dict[QueueRef, QueueSummary] = {}
        # Each queue's summary as pages were last given it, and the exact read it came from.
        self.shown: dict[QueueRef, tuple[QueueSummary, QueueSummary]] = {}
        # Queue → number of its last change a page would see, in that order: a view's kept
        # hand-over (queues/handover/) looks again only at the queues changed since it looked.
        self.change_number = 0
        self.changes: dict[QueueRef, int] = {}
        # What pages were sent, versioned: every message of changed counts is the next
        # sequence number, and each queue remembers the one that last changed it, so that a page
        # rendered at one version is sent only what changed after. ``era`` changes whenever the
        # pages can no longer be told what changed (the counts were forgotten).
        self.sequence = 0
        self.changed_at: dict[QueueRef, int] = {}
        self.era = secrets.token_hex(4)
        # Every state's count summed over ``last_sent``, kept as entries change.
        self.totals: dict[str, int] = {}
        # Paused queues → why (read once as each pause is first sent; "" for no reason).
        self.reasons: dict[QueueRef, str] = {}
        # Queues whose exact read is in flight → the events taken meanwhile, held till it ends.
        self.reading: dict[QueueRef, list[QueueEvent]] = {}
        self.queues: list[QueueRef] = []  # every queue, as the last full refresh found them
        # Queues one exact read names at most: a round trip that must answer within the Redis
        # timeout, in a pass that must end in time to renew the lease (the rest: passes after).
        self.batch = max(1, batch)
        self.unread: list[QueueRef] = []
        self.quiet_after = quiet_after  # a queue not read for this long is due a re-read
        # Batches of a second's reads (a round trip each), two seconds' saved up: a pass that
        # comes late still spends the second it missed.
        rate = quiet_reads_per_second
        self.quiet_reads = TokenBucket(rate, max(1, int(rate)), saved_for=2.0)
        self.quiet_due = 1  # queues due a quiet re-read when last looked for

    @property
    def version(self) -> str:
        """What the pages have been sent so far, as a page carries it (``era:sequence``)."""
        return f"{self.era}:{self.sequence}"

    def _since(self, version: str | None) -> int | None:
        """The sequence number of ``version`` when it is of this era, else None (send all)."""
        era, _, sequence = (version or "").partition(":")
        if era != self.era or not sequence.isdigit() or int(sequence) > self.sequence:
            return None
        return int(sequence)

    def snapshot(self, version: str | None = None) -> LiveMessage | None:
        """Every queue's last known counts (no Redis read) for an overview that just connected;
        only those changed after ``version`` when it is of this era (empty: nothing changed)."""
        if not self.last_sent:
            return None
        since = self._since(version)
        entries = [
            live_protocol.overview_entry(entry)
            for ref, entry in self.last_sent.items()
            if since is None or self.changed_at.get(ref, 0) > since
        ]
        return live_protocol.overview_counts_message(entries, totals=self._totals())

    def _totals(self) -> dict[str, ConnectionTotals]:
        totals: ConnectionTotals = {"queues": len(self.last_sent), "counts": dict(self.totals)}
        return {self.watching.connection or "": totals}

    def _count_in(self, entry: CountsEntry | None, sign: int) -> None:
        if entry is None:
            return
        totals = self.totals
        for state, n in entry["counts"].items():
            totals[state] = totals.get(state, 0) + sign * n

    def snapshot_of(self, slug: str, version: str | None = None) -> LiveMessage | None:
        """Last known counts of one queue, for its queue or job page that just connected."""
        since = self._since(version)
        entries = [
            entry
            for ref, entry in self.last_sent.items()
            if entry["slug"] == slug and (since is None or self.changed_at.get(ref, 0) > since)
        ]
        if not entries and since is None:
            return None
        return live_protocol.counts_message(entries)

    def _touch(self, ref: QueueRef) -> None:
        self.change_number += 1
        self.changes.pop(ref, None)  # to the end: the log stays in the order of the numbers
        self.changes[ref] = self.change_number

    def changed_since(self, number: int) -> list[QueueRef]:
        """The queues changed after change ``number``: only those, newest first."""
        changes = reversed(self.changes.items())
        return [ref for ref, _ in itertools.takewhile(lambda c: c[1] > number, changes)]

    def reason_of(self, ref: QueueRef) -> str | None:
        """Why ``ref`` was paused, as the reader last read it (None: not read)."""
        return self.reasons.get(ref)

    def take(self, ref: QueueRef, event: QueueEvent) -> None:
        self.events_taken[ref] = self.events_taken.get(ref, 0) + 1
        held = self.reading.get(ref)
        if held is not None:
            held.append(event)
            return
        self._apply(ref, event)

    def _apply(self, ref: QueueRef, event: QueueEvent) -> None:
        at = event.at_ms
        effect = self.estimates.apply(ref, event)
        if effect is not Effect.NONE:
            self._touch(ref)
            self.moved.setdefault(ref, at)
            self.resync_at.setdefault(ref, time.monotonic() + self.resync_interval)
        if effect is Effect.UNCERTAIN:
            self.uncertain.setdefault(ref, at)

    def restart(self) -> None:
        """Start again from exact reads (another process may have read and sent meanwhile)."""
        self.last_sent.clear()
        self.estimates.clear()
        self.moved.clear()
        self.uncertain.clear()
        self.resync_at.clear()
        self._new_era()

    def doubt_drifted(self) -> None:
        """Pages watch again after nobody did, the streams read all along (for history): counts
        that moved unsent, met an event they could not follow or were due a re-read are
        forgotten, to be read afresh; the rest stay."""
        now = time.monotonic()
        doubtful = set(self.moved) | set(self.uncertain)
        doubtful.update(ref for ref, at in self.resync_at.items() if at <= now)
        for ref in doubtful:
            self._forget(ref)

    def _forget(self, ref: QueueRef) -> None:
        """``ref``'s counts are not known, nor sent, nor due a read."""
        self._touch(ref)
        self.estimates.forget(ref)
        self._count_in(self.last_sent.pop(ref, None), -1)
        self.summaries.pop(ref, None)
        self.moved.pop(ref, None)
        self.uncertain.pop(ref, None)
        self.resync_at.pop(ref, None)

    def forget_sent(self) -> None:
        """Redis is away: what the pages were sent is no longer known to hold."""
        self.last_sent.clear()
        self.estimates.clear()
        self._new_era()

    def _new_era(self) -> None:
        self.totals.clear()
        self.summaries.clear()
        self.shown.clear()
        self.changed_at.clear()
        self.changes.clear()  # a new era: every kept hand-over is made again
        self.unread.clear()
        self.era = secrets.token_hex(4)
        self.sequence = 0

    async def refresh_all(self, queues: list[QueueRef], *, everything: bool = True) -> None:
        """Every queue there is: read those whose counts are not known yet and the watched ones
        not read lately, and send their counts that changed, or all with ``everything`` (the
        others' are kept exact by the events, checked by :meth:`verify_quiet`)."""
        for ref in set(self.last_sent) - set(queues):  # unlisted: read again once listed
            self._forget(ref)
        self.queues = list(queues)
        now = time.monotonic()
        watched = refs_of(self.watching.queues | {slug for slug, _ in self.watching.jobs})
        known, read_at, resync = self.estimates.known, self.read_at, self.resync_interval
        stale = [
            ref
            for ref in queues
            if not known(ref) or (ref in watched and now - read_at.get(ref, 0) >= resync)
        ]
        shown = refs_of(self.watching.shown)
        stale.sort(key=lambda ref: ref not in shown)  # the rows open overviews show first
        self.unread = stale[self.batch :]
        await self.read_exact(stale[: self.batch])
        # ``everything``: changed or not, for pages that may have missed a message. In slices,
        # each a step of the loop: 50,000 queues in one held it for seconds.
        for start in range(0, len(queues), SLICE):
            if start:
                await asyncio.sleep(0)
            self._send(queues[start : start + SLICE], 0, everything=everything)

    def drop(self, refs: Iterable[QueueRef]) -> None:
        """``refs`` were obliterated: forgotten; an overview drops their rows, a queue page
        says its queue is gone."""
        gone = {ref for ref in refs if ref in self.last_sent}
        if not gone:
            return
        for ref in gone:  # nor read again: a read would list it again, with no jobs
            self._forget(ref)
            self.shown.pop(ref, None)
            self.changed_at.pop(ref, None)
        self.queues = [ref for ref in self.queues if ref not in gone]
        self.unread = [ref for ref in self.unread if ref not in gone]
        slugs = sorted(ref.slug for ref in gone)
        message = live_protocol.overview_counts_message([], 0, self._totals(), slugs)
        self.outbox.emit(("overview",), message)
        for slug in set(slugs) & self.watching.queues:
            self.outbox.emit(("queue", slug), live_protocol.gone_message(slug))

    async def verify_quiet(self) -> None:
        """Re-read queues unread for ``quiet_after`` s, as many as the quiet budget allows."""
        if not self.quiet_reads.ready(self.quiet_due):
            return  # the budget grants none yet: not worth a walk over every queue each pass
        since = time.monotonic() - self.quiet_after
        read_at = self.read_at
        due = [ref for ref in self.queues if read_at.get(ref, 0) <= since]
        self.quiet_due = len(due)
        granted = self.quiet_reads.take(len(due)) if due else 0
        if not granted:
            return
        shown = refs_of(self.watching.shown)  # rows on an open overview first, then the rest,
        oldest: list[QueueRef] = []  # each the longest unread first (none is starved)
        for group in ([r for r in due if r in shown], [r for r in due if r not in shown]):
            oldest += heapq.nsmallest(granted - len(oldest), group, key=lambda r: read_at.get(r, 0))
        await self.read_exact(oldest)

    async def flush(self) -> None:
        """Read a batch the last full refresh left unread and the due queues; send what moved."""
        if self.unread:
            batch, self.unread = self.unread[: self.batch], self.unread[self.batch :]
            await self.read_exact([ref for ref in batch if not self.estimates.known(ref)])
        now = time.monotonic()
        due = {
            ref for ref in self.uncertain if now - self.read_at.get(ref, 0) >= self.counts_interval
        }
        due.update(ref for ref, at in self.resync_at.items() if at <= now)
        if due:
            await self.read_exact(list(due))
        if self.moved:
            moved, self.moved = self.moved, {}
            await self._read_reasons(list(moved))
            self._send(list(moved), min(moved.values()))

    async def read_new(self, refs: list[QueueRef]) -> None:
        """Read newly followed queues: a batch now, the others in the passes after."""
        self.unread.extend(refs[self.batch :])
        await self.read_exact(refs[: self.batch])

    async def read_exact(self, refs: list[QueueRef]) -> None:
        """Re-read ``refs``' counts as the estimates' new base, send what changed: a round trip
        per ``batch`` queues."""
        for start in range(0, len(refs), self.batch):
            await self._read_batch(refs[start : start + self.batch])

    async def _read_batch(self, refs: list[QueueRef]) -> None:
        if not refs:
            return
        taken = self.reading_begins(refs)
        try:
            positioned = await read_positioned(refs, self.legacy_paused)
            self.took_exact(positioned, taken)
        finally:
            self.reading_ends(refs)
        summaries = [found.summary for found in positioned]
        # The oldest event these counts are the first to show (0: a resync shows no new event).
        pending = [self.moved.pop(item.ref) for item in summaries if item.ref in self.moved]
        await self._read_reasons([item.ref for item in summaries])
        self._send([item.ref for item in summaries], min(pending, default=0))

    def reading_begins(self, refs: list[QueueRef]) -> dict[QueueRef, int]:
        """``refs``' exact read is in flight (their events held): the events taken so far."""
        for ref in refs:
            self.reading.setdefault(ref, [])
            self._touch(ref)
        return {ref: self.events_taken.get(ref, 0) for ref in refs}

    def took_exact(self, positioned: list[Positioned], taken: dict[QueueRef, int]) -> None:
        """An exact read's summaries as the estimates' new base."""
        now = time.monotonic()
        for found in positioned:
            item, ref = found.summary, found.summary.ref
            self.estimates.set_exact(
                ref, item.counts, item.paused, ref in self.legacy_paused, found.position
            )
            self.read_at[ref] = now
            self.summaries[ref] = item
            self.uncertain.pop(ref, None)
            if found.position is None and self.events_taken.get(ref, 0) != taken[ref]:
                # Events came in while reading: the read may or may not hold them.
                self.resync_at[ref] = now + self.resync_interval
            else:
                self.resync_at.pop(ref, None)

    def reading_ends(self, refs: list[QueueRef]) -> None:
        """The events taken meanwhile, on the new base (those it holds move nothing), or on
        the old one when the read failed."""
        for ref in refs:
            self._touch(ref)
            for event in self.reading.pop(ref, []):
                self._apply(ref, event)

    async def _read_reasons(self, refs: list[QueueRef]) -> None:
        """Why each newly paused queue of ``refs`` was paused (one round trip, only when a
        queue's pause is about to be sent for the first time): the open pages show it."""
        wanted = []
        for ref in refs:
            if not (self.estimates.known(ref) and self.estimates.paused(ref)):
                self.reasons.pop(ref, None)
            elif ref not in self.reasons or not self._sent_paused(ref):
                wanted.append(ref)
        if wanted:
            found = await pause_reasons(wanted)
            self.reasons.update({ref: found.get(ref, "") for ref in wanted})

    def _sent_paused(self, ref: QueueRef) -> bool:
        sent = self.last_sent.get(ref)
        return sent is not None and sent["paused"]

    def _send(self, refs: list[QueueRef], event_at: int, *, everything: bool = False) -> None:
        """``event_at``: when the oldest event behind these counts was written (0: none)."""
        changed = []
        sequence = self.sequence + 1
        for ref in refs:
            if not self.estimates.known(ref):
                continue
            paused = self.estimates.paused(ref)
            counts, reason = self.estimates.counts(ref), self.reasons.get(ref)
            entry = live_protocol.counts_entry(ref.slug, ref.name, counts, paused, reason)
            before = self.last_sent.get(ref)
            if before != entry:
                # Only a real change counts for a page resuming from an earlier version: a
                # resend of everything is for sockets that may have missed a message.
                self.changed_at[ref] = sequence
                self._count_in(before, -1)
                self._count_in(entry, 1)
            if everything or before != entry:
                changed.append(entry)
            self.last_sent[ref] = entry
        if not changed:
            return
        self.sequence = sequence
        overview = [live_protocol.overview_entry(entry) for entry in changed]
        self.outbox.emit(
            ("overview",),
            live_protocol.overview_counts_message(overview, event_at, self._totals()),
        )
        for entry in changed:
            if entry["slug"] in self.watching.queues:
                self.outbox.emit(
                    ("queue", entry["slug"]), live_protocol.counts_message([entry], event_at)
                )
