"""What the open pages watch: queues (for rows and progress), single jobs (for logs, state) and
the jobs of flow trees (their state only: no log is tailed for them).

Each server process counts its own watchers and publishes the set it needs to a Redis hash, so
that the one process holding the live lease serves everyone's pages. Watchers are counted per
process, never per viewer in Redis: a thousand tabs on one job is one entry. What one process
publishes is bounded (``MAX_ENTRIES`` names of at most ``MAX_NAME`` characters), and so is what
the reader takes from each process's entry: no page can grow Redis or the reader without end.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import redis.asyncio as aioredis

JobKey = tuple[str, str]  # (queue slug, job id)


@dataclass(frozen=True)
class Everyone:
    """The union of every live process's interest."""

    queues: set[str]
    jobs: set[JobKey]
    overview: bool
    # Queues whose rows open overviews show: their quiet re-reads come first.
    shown: set[str] = field(default_factory=set)
    # Jobs of the flow trees job pages show: their state changes are sent, nothing else.
    nodes: set[JobKey] = field(default_factory=set)


# An entry older than this belongs to a process that died.
STALE_MS = 15_000
# Distinct queues and jobs one process's pages may watch at once: a few per open page, so
# thousands of pages; a watch past it is refused (the page says so) rather than published.
MAX_ENTRIES = 5000
# Characters of a queue name or job id: longer ones cannot be BullMQ's.
MAX_NAME = 1024


@dataclass
class Interest:
    """What one process's pages watch, counted per watcher: its websocket consumers update it,
    its follower publishes it."""

    queues: Counter[str] = field(default_factory=Counter)
    jobs: Counter[JobKey] = field(default_factory=Counter)
    overview: int = 0
    # Rows open overviews show (one overview page shows at most a few hundred).
    shown: Counter[str] = field(default_factory=Counter)
    nodes: Counter[JobKey] = field(default_factory=Counter)
    changed: bool = True

    def show(self, slugs: Iterable[str]) -> None:
        """Count one more overview showing each of ``slugs`` (at most ``MAX_ENTRIES`` in all:
        past it a row is simply not first in line)."""
        for slug in slugs:
            if len(slug) <= MAX_NAME and (slug in self.shown or len(self.shown) < MAX_ENTRIES):
                self.shown[slug] += 1
                self.changed = self.changed or self.shown[slug] == 1

    def unshow(self, slugs: Iterable[str]) -> None:
        for slug in slugs:
            self.shown[slug] -= 1
            if self.shown[slug] <= 0:
                del self.shown[slug]
                self.changed = True

    def watch_overview(self) -> None:
        self.overview += 1
        self.changed = self.changed or self.overview == 1

    def unwatch_overview(self) -> None:
        self.overview = max(0, self.overview - 1)
        self.changed = self.changed or self.overview == 0

    @property
    def empty(self) -> bool:
        return not (self.queues or self.jobs or self.nodes or self.overview)

    @property
    def size(self) -> int:
        """Distinct queues and jobs watched: what the published entry holds."""
        return len(self.queues) + len(self.jobs) + len(self.nodes)

    @property
    def watchers(self) -> int:
        """Watches this process's pages hold (a page holds one or two): what one update
        costs this process to send."""
        counters = (self.queues, self.jobs, self.nodes)
        return self.overview + sum(counter.total() for counter in counters)

    def watch_queue(self, slug: str) -> bool:
        """Count one more watcher of ``slug``; False (nothing counted) when it would be a new
        entry past ``MAX_ENTRIES``, or its name cannot be a queue's."""
        if len(slug) > MAX_NAME or (slug not in self.queues and self.size >= MAX_ENTRIES):
            return False
        self.queues[slug] += 1
        self.changed = self.changed or self.queues[slug] == 1
        return True

    def unwatch_queue(self, slug: str) -> None:
        self.queues[slug] -= 1
        if self.queues[slug] <= 0:
            del self.queues[slug]
            self.changed = True

    def watch_job(self, slug: str, job_id: str) -> bool:
        """As :meth:`watch_queue`, for one job."""
        return self._count(self.jobs, (slug, job_id))

    def unwatch_job(self, slug: str, job_id: str) -> None:
        self._uncount(self.jobs, (slug, job_id))

    def watch_node(self, slug: str, job_id: str) -> bool:
        """As :meth:`watch_job`, for a job of a flow tree: its state alone."""
        return self._count(self.nodes, (slug, job_id))

    def unwatch_node(self, slug: str, job_id: str) -> None:
        self._uncount(self.nodes, (slug, job_id))

    def _count(self, counter: Counter[JobKey], key: JobKey) -> bool:
        too_long = len(key[0]) > MAX_NAME or len(key[1]) > MAX_NAME
        if too_long or (key not in counter and self.size >= MAX_ENTRIES):
            return False
        counter[key] += 1
        self.changed = self.changed or counter[key] == 1
        return True

    def _uncount(self, counter: Counter[JobKey], key: JobKey) -> None:
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]
            self.changed = True

    def as_json(self) -> str:
        return json.dumps(
            {
                "queues": sorted(self.queues),
                "jobs": sorted(self.jobs),
                "overview": self.overview > 0,
                "shown": sorted(self.shown),
                "nodes": sorted(self.nodes),
                "at": int(time.time() * 1000),
            }
        )


async def publish(redis: aioredis.Redis, key: str, owner: str, interest: Interest) -> None:
    await redis.hset(key, owner, interest.as_json())
    interest.changed = False


async def read_all(redis: aioredis.Redis, key: str) -> Everyone:
    """The union of every live process's interest; dead processes' entries are dropped, and
    each entry counts for at most ``MAX_ENTRIES`` names of at most ``MAX_NAME`` characters."""
    entries = await redis.hgetall(key)
    now = int(time.time() * 1000)
    queues: set[str] = set()
    jobs: set[JobKey] = set()
    overview = False
    shown: set[str] = set()
    nodes: set[JobKey] = set()
    stale = []
    for owner, raw in entries.items():
        try:
            entry = json.loads(raw)
            if now - int(entry["at"]) > STALE_MS:
                stale.append(owner)
                continue
            queues.update(name for name in entry["queues"][:MAX_ENTRIES] if _name(name))
            overview = overview or bool(entry.get("overview"))
            shown.update(name for name in entry.get("shown", ())[:MAX_ENTRIES] if _name(name))
            jobs.update(_job_keys(entry["jobs"]))
            nodes.update(_job_keys(entry.get("nodes", ())))
        except (ValueError, KeyError, TypeError):
            stale.append(owner)
    if stale:
        await redis.hdel(key, *stale)
    return Everyone(queues, jobs, overview, shown, nodes)


def _job_keys(entries: list[list[str]]) -> set[JobKey]:
    return {
        (slug, job_id) for slug, job_id in entries[:MAX_ENTRIES] if _name(slug) and _name(job_id)
    }


def _name(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_NAME
