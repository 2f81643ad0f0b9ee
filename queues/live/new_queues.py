"""Noticing new queues within a second or two while someone watches the overview, and now and
then while history records with nobody watching (what a new queue's jobs did before it was
noticed is back-filled from the jobs BullMQ keeps).

Discovery's full SCAN is cached for ``DISCOVERY_INTERVAL`` seconds (30 by default): fine for
pages, too slow for an overview that should show a queue as soon as BullMQ creates it. BullMQ
keeps no registry of queues, so this walks the keyspace with a SCAN cursor that carries over
from call to call, at most ``keys_per_second`` keys a second: on a small Redis a whole sweep
fits in one step, on a large one a sweep takes longer but Redis's cost stays the same. A
whole sweep also says which queues are there: one followed that it did not see may be gone.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from queues.errors import NodeUnreachable
from queues.reads.discovery import escape_glob, queue_name_of_key
from queues.reads.keys import QueueRef
from queues.redis import connections
from queues.redis.cluster import is_cluster, masters, node_down, note_node_down
from queues.redis.errors import reason
from queues.redis.unreachable import UNREACHABLE

SCAN_BATCH = 1000


class NewQueueScanner:
    def __init__(
        self, prefixes: list[str], keys_per_second: int, connection: str | None = None
    ) -> None:
        self.prefixes = prefixes
        self.connection = connection or connections.default_name()  # whose keys are walked
        self.keys_per_second = max(SCAN_BATCH, keys_per_second)
        self._cursors: dict[str, int] = {}
        # Per place walked: the queues seen since its walk last began; then those of its last
        # whole walk, until every place has one: a queue followed that none of them saw may
        # have been obliterated (following.py asks Redis before it believes so).
        self._walking: dict[str, set[QueueRef]] = {}
        self._walked: dict[str, set[QueueRef]] = {}
        self._swept: set[QueueRef] | None = None

    def take_swept(self) -> set[QueueRef] | None:
        """Every queue the last whole sweep saw, once (None: no sweep ended since)."""
        swept, self._swept = self._swept, None
        return swept

    async def step(self, redis: aioredis.Redis, seconds: float = 1.0) -> set[QueueRef]:
        """Queues seen in this step's share of the sweep (known ones included)."""
        calls = max(1, int(self.keys_per_second * seconds) // SCAN_BATCH // len(self.prefixes))
        found: set[QueueRef] = set()
        nodes = await masters(redis) if is_cluster(redis) else [None]
        places = []
        for prefix in self.prefixes:
            pattern = f"{escape_glob(prefix)}:*:[im][de]*"
            for node in nodes:  # a cluster's masters each hold a share of the keys
                place = prefix if node is None else f"{prefix} {node.name}"
                places.append(place)
                cursor = self._cursors.get(place, 0)
                # A walk that begins (cursor 0) begins its own record.
                walking = self._walking.get(place, set()) if cursor else set()
                self._walking[place] = walking
                for _ in range(calls):
                    try:
                        cursor, keys = await _scan(redis, node, cursor, pattern)
                    except UNREACHABLE as error:
                        if node is None:
                            raise
                        # One master of a cluster is down: the others' new queues are
                        # still noticed, and this one's walk goes on where it stopped.
                        note_node_down(redis, node.name, reason(error))
                        if all(node_down(redis, n.name) for n in nodes if n is not None):
                            raise
                        break
                    for key in keys:
                        name = queue_name_of_key(prefix, str(key))
                        if name is not None:
                            ref = QueueRef(prefix, name, self.connection)
                            found.add(ref)
                            walking.add(ref)
                    if cursor == 0:
                        self._walked[place] = self._walking.pop(place)
                        break
                self._cursors[place] = cursor
        if all(place in self._walked for place in places):
            self._swept = set()
            for place in places:
                self._swept |= self._walked.pop(place)
        return found


async def _scan(redis: aioredis.Redis, node: Any, cursor: int, pattern: str) -> tuple[int, Any]:
    if node is not None and (known_down := node_down(redis, node.name)) is not None:
        raise NodeUnreachable(node.name, known_down)  # not waited for again at once
    if node is None:
        found: tuple[int, Any] = await redis.scan(cursor, match=pattern, count=SCAN_BATCH)
        return found
    # One master's SCAN answers its cursor under the node's name.
    cursors, keys = await redis.execute_command(  # type: ignore[no-untyped-call]
        "SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_BATCH, target_nodes=node
    )
    return int(cursors[node.name]), keys
