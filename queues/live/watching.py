"""What the pages of every process watch, as the reader serves it.

The union of every process's published interest (read every ``interest_interval``), plus this
process's own pages at once, so that they need not wait for the next exchange.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from queues.errors import BullpenError
from queues.live.interest import Everyone, Interest, JobKey
from queues.reads.keys import QueueRef
from queues.redis import connections


class Watching:
    # Nothing watched for this long: the reader stops reading until a page watches again.
    IDLE_AFTER = 30.0

    def __init__(self, connection: str | None = None) -> None:
        """``connection``: the Redis whose reader this serves; pages' watches of queues on
        other connections are left to their own readers (None: every watch is served)."""
        self.connection = connection
        self.queues: set[str] = set()
        self.jobs: set[JobKey] = set()
        self.nodes: set[JobKey] = set()  # jobs of flow trees: their state alone
        self.overview = False
        self.shown: set[str] = set()  # rows open overviews show
        self.idle_since: float | None = None

    @property
    def idle(self) -> bool:
        """No page anywhere has watched anything for IDLE_AFTER seconds."""
        return self.idle_since is not None and time.monotonic() - self.idle_since > self.IDLE_AFTER

    def everywhere(self, everyone: Everyone) -> bool:
        """Take every process's interest; True when it ends a time of idleness."""
        self.queues, self.jobs = self._mine(everyone.queues), self._mine_jobs(everyone.jobs)
        self.overview = everyone.overview
        self.shown, self.nodes = self._mine(everyone.shown), self._mine_jobs(everyone.nodes)
        if not (self.queues or self.jobs or self.nodes or self.overview):
            if self.idle_since is None:
                self.idle_since = time.monotonic()
            return False
        woke = self.idle
        self.idle_since = None
        return woke

    def add_own(self, registry: Interest) -> None:
        """This process's own pages count at once."""
        if registry.empty:
            return
        self.queues.update(self._mine(registry.queues))
        self.jobs.update(self._mine_jobs(registry.jobs))
        self.nodes.update(self._mine_jobs(registry.nodes))
        self.overview = self.overview or registry.overview > 0
        self.shown.update(self._mine(registry.shown))
        self.idle_since = None

    def _serves(self, slug: str) -> bool:
        return self.connection is None or connections.split_slug(slug)[0] == self.connection

    def _mine(self, slugs: Iterable[str]) -> set[str]:
        if self.connection is None or not connections.several():
            return set(slugs)
        return {slug for slug in slugs if self._serves(slug)}

    def _mine_jobs(self, jobs: Iterable[JobKey]) -> set[JobKey]:
        if self.connection is None or not connections.several():
            return set(jobs)
        return {job for job in jobs if self._serves(job[0])}


def refs_of(slugs: Iterable[str]) -> set[QueueRef]:
    """The queues ``slugs`` name (a page's few): looked up by queue, rather than a slug made
    for each of 50,000 queues."""
    found = set()
    for slug in slugs:
        try:
            found.add(QueueRef.from_slug(slug))
        except (BullpenError, ValueError):
            continue  # a page's slug naming no queue there can be
    return found
