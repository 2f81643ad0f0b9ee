"""Pages served from what this process's live readers know.

While a reader follows a Redis connection's event streams it keeps every queue's counts true
(queues/live/count_changes.py); a page listing thousands of queues takes those instead of
reading each queue again, and reads only the queues the reader cannot vouch for, in the same
one round trip. The page also learns the version of the counts the reader had sent: its
socket hands it back and is sent only what changed after (consumers.py), so nothing between
the render and the subscription is lost or read twice.
"""

from __future__ import annotations

from collections.abc import Mapping

from dashboard.live import channel_groups
from queues.live.follower import VIEW_LAG
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef
from queues.redis.connections import several
from queues.redis.per_connection import by_connection


class ReaderCounts:
    """The known counts for one page render; pass it as ``summaries(known=…)``."""

    def __init__(self) -> None:
        self.followers = {f.connection: f for f in channel_groups.running_followers()}
        self.versions: list[str] = []
        # Every queue the page lists came from a reader: only then may its socket resume.
        self.complete = True

    def __call__(self, refs: list[QueueRef]) -> Mapping[QueueRef, QueueSummary]:
        known: dict[QueueRef, QueueSummary] = {}
        # One connection: its reader's answer as it is (no walk over every queue to split them).
        shares = {refs[0].connection: refs} if refs and not several() else by_connection(refs)
        for name, share in shares.items():
            follower = self.followers.get(name)
            if follower is None:
                self.complete = False
                continue
            have, version = follower.known_summaries(share)
            if version is None or len(have) < len(share):
                self.complete = False
            if version is not None:
                self.versions.append(version)
            if len(shares) == 1:
                return have
            known.update(have)
        return known

    def still(self, ref: QueueRef) -> tuple[str, int] | None:
        """A token equal between two calls while no event of ``ref`` came (the reader's era
        and its count of the queue's events), or None when the reader cannot say. Within the
        reader's lag, as views take its counts: what a caller read after the token was taken
        may hold events the reader takes later, which change the token (read again then)."""
        follower = self.followers.get(ref.connection)
        if follower is None or not follower.current_within(VIEW_LAG) or follower.streams.lost:
            return None
        if not follower.streams.follows(ref):
            return None
        return follower.counts.era, follower.counts.events_taken.get(ref, 0)

    def list_position(self, ref: QueueRef) -> str:
        """Where this process's reader stands in ``ref``'s events (``era:events taken``), as
        a queue page carries it, or "" when it does not read them. Unlike :meth:`still` it
        holds while the reader lags: an event it has not taken yet reaches the page's socket
        as a row's change once taken, the page watching by then."""
        follower = self.followers.get(ref.connection)
        if follower is None or not follower.leader or follower.redis_ok is not True:
            return ""
        if follower.streams.lost or not follower.streams.follows(ref):
            return ""
        return f"{follower.counts.era}:{follower.counts.events_taken.get(ref, 0)}"

    @property
    def version(self) -> str:
        """What the page's socket hands back (``era:sequence`` per reader), or "" when some
        of the page's queues were read from Redis: its socket is then sent every count."""
        return " ".join(self.versions) if self.complete and self.versions else ""


def list_unchanged(slug: str, list_at: str) -> bool:
    """Whether this process's reader still stands at ``list_at`` in ``slug``'s events (a
    queue page's position when its list was read): no event of the queue came since."""
    return bool(list_at) and list_at == ReaderCounts().list_position(QueueRef.from_slug(slug))
