"""Reading the followed queues' BullMQ event streams: one blocking XREAD for all of them, each
resumed from the last id read, on a connection of its own (a blocked read holds it).

An XREAD's cost grows faster than the streams it names (at 50,000 streams one took 0.3-0.6 s
of Redis's time, and its block as long again to set up and undo), and Redis serves nobody else
meanwhile. Past ``share`` streams they are read in shares of at most that many, each its own
XREAD without blocking (a few milliseconds each), all in one pipeline, every ``POLL_S``
seconds while nothing comes. So are a Redis Cluster's: one command may only name keys of one
slot, so when the queues are spread over slots (``{tenant-1}`` in the names) each slot's streams
are a share of their own; when every followed queue shares a slot (a hash tag in the prefix,
``{bull}``) and they are few enough, the one blocking XREAD stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import redis.asyncio as aioredis
from redis.crc import key_slot

from queues.cancelling import raise_if_cancelled
from queues.errors import NodeUnreachable
from queues.live.events import QueueEvent, parse_entry
from queues.live.status import REDIS_ERRORS
from queues.reads.keys import QueueRef
from queues.redis import fastpipe
from queues.redis.clients import close_client, new_client
from queues.redis.cluster import is_cluster

POLL_S = 0.5
READ_COUNT = 1000  # entries of one stream one read returns at most

TakeEvent = Callable[[QueueRef, QueueEvent], None]
ReadFailed = Callable[[str], Awaitable[None]]


class StreamReader:
    def __init__(
        self, block_ms: int, read_pause: float, connection: str | None = None, share: int = 10_000
    ) -> None:
        self.connection = connection  # the Redis read (None: the default one)
        self.block_ms = block_ms
        self.share = max(1, share)  # streams one XREAD names at most
        # Least time from one read's start to the next's after it returned events: a busy
        # stream is read in batches, while an event after a quiet spell goes out at once.
        self.read_pause = read_pause
        self._quiet = True  # the last read returned nothing (or none was made yet)
        self.refs: dict[str, QueueRef] = {}  # events stream key → queue
        self._followed: set[QueueRef] = set()  # the same queues, for a view's look-ups
        self.followed_changes = 0  # how often ``_followed`` changed: a view's kept hand-over
        self.last_ids: dict[str, str] = {}
        # When a read last returned everything the streams held (monotonic): the counts were
        # as current as the events then.
        self.caught_up_at = -math.inf
        # How long the last read took (s): in shares, the reads come that far apart and more.
        self.read_time = 0.0
        # The shares' XREADs as last built, with their RESP, by the streams they name.
        self._shares: list[_Share] | None = None
        self._client: aioredis.Redis | None = None
        # The Redis Cluster masters whose streams the last read could not reach ("": none).
        self.lost = ""

    def caught_up_within(self, slack: float) -> bool:
        """A read returned everything the streams held less than one read's wait (its block,
        or the pause between reads in shares and the time the last one took), ``read_pause``
        and ``slack`` seconds ago."""
        if self._one_read():
            wait = self.block_ms / 1000
        else:
            wait = POLL_S + self.read_time
        return time.monotonic() - self.caught_up_at < wait + self.read_pause + slack

    @property
    def shares(self) -> int:
        """XREADs one read of the streams makes (1: one blocking read of them all)."""
        return len(self._shares) if self._shares else 1

    def follows(self, ref: QueueRef) -> bool:
        return ref in self._followed

    def followed(self, refs: Iterable[QueueRef]) -> list[QueueRef]:
        """Those of ``refs`` whose streams are followed."""
        followed = self._followed
        return [ref for ref in refs if ref in followed]

    def unfollowed(self, refs: Iterable[QueueRef]) -> list[QueueRef]:
        """Those of ``refs`` whose streams are not followed (every 5 s over every queue)."""
        followed = self._followed
        return [ref for ref in refs if ref not in followed]

    async def follow(self, redis: aioredis.Redis, new: list[QueueRef]) -> None:
        """Follow ``new`` queues' streams from their current ends: what came before is in
        the counts."""
        for start in range(0, len(new), self.share):
            await self._follow_share(redis, new[start : start + self.share])
        if new:
            self._shares = None

    async def _follow_share(self, redis: aioredis.Redis, new: list[QueueRef]) -> None:
        try:
            tails = await fastpipe.execute(
                redis, [("XREVRANGE", ref.key("events"), "+", "-", "COUNT", 1) for ref in new]
            )
        except NodeUnreachable:
            return  # their Redis Cluster masters are down: followed once they are back
        for ref, tail in zip(new, tails, strict=True):
            if isinstance(tail, NodeUnreachable):
                continue  # likewise
            last = tail[0][0] if isinstance(tail, list) and tail else "0-0"
            self.last_ids[ref.key("events")] = last
            self.refs[ref.key("events")] = ref
            self._followed.add(ref)
            self.followed_changes += 1

    def unfollow(self, refs: Iterable[QueueRef]) -> None:
        """Stop following ``refs`` (obliterated): one created again is followed afresh."""
        for ref in refs:
            key = ref.key("events")
            if self.refs.pop(key, None) is not None:
                self._followed.discard(ref)
                self.followed_changes += 1
                self.last_ids.pop(key, None)
                self._shares = None

    def forget_all(self) -> None:
        """Follow nothing until told again (the streams are then read from their ends)."""
        self._quiet = True
        self.refs.clear()
        self._followed.clear()
        self.followed_changes += 1
        self.last_ids.clear()
        self._shares = None
        self.caught_up_at = -math.inf

    async def read_forever(
        self, may_read: Callable[[], bool], take: TakeEvent, failed: ReadFailed, wake: asyncio.Event
    ) -> None:
        """Hand every event to ``take`` while ``may_read()``; ``wake`` is set after a read
        that returned events, ``failed`` is told when Redis is away."""
        while True:
            raise_if_cancelled()
            if not may_read() or not self.refs:
                await asyncio.sleep(0.2)
                continue
            try:
                if self._client is None:
                    # No retries: a failed read says Redis is away at once (connection.py).
                    self._client = new_client(
                        blocking=True, connection=self.connection, retries=False
                    )
                asked_at = time.monotonic()
                reply = await self._read(self._client)
                self.read_time = time.monotonic() - asked_at
            except REDIS_ERRORS as error:
                await self.reset()
                await failed(str(error))
                await asyncio.sleep(1)
                continue
            whole = True
            for stream_key, entries in reply or []:
                whole = whole and len(entries) < READ_COUNT  # else more are waiting
                ref = self.refs.get(stream_key)
                if ref is None:
                    continue
                for stream_id, fields in entries:
                    self.last_ids[stream_key] = stream_id
                    take(ref, parse_entry(stream_id, fields))
                self._moved(stream_key)
            if whole:
                self.caught_up_at = asked_at
            if not reply:
                self._quiet = True
                continue
            wake.set()
            pause = self.pause_after(asked_at, time.monotonic()) if whole else 0.0
            self._quiet = False
            await asyncio.sleep(pause)  # none when more are waiting: read on at once

    def pause_after(self, asked_at: float, now: float) -> float:
        """Seconds to wait before the next read after one, begun at ``asked_at``, that returned
        events: none after a quiet spell (the read before returned nothing, or this one waited
        ``read_pause`` or longer), so that the next event is read at once too; else the rest of
        ``read_pause`` (the streams are busy: what comes meanwhile is one batch). Reads that
        return events stay at most one per ``read_pause`` (or per ``block_ms`` after a quiet
        one), however busy the streams."""
        if self._quiet:
            return 0.0
        return max(0.0, self.read_pause - (now - asked_at))

    def _one_read(self) -> bool:
        return len(self.refs) <= self.share and (self._shares is None or len(self._shares) < 2)

    async def _read(self, client: aioredis.Redis) -> list[Any]:
        if self._shares is None:
            self._shares = _shares(list(self.refs), self.share, is_cluster(client))
        if len(self._shares) == 1 and len(self.refs) <= self.share:
            streams: dict[Any, Any] = {key: self.last_ids.get(key, "$") for key in self.refs}
            return list(await client.xread(streams, count=READ_COUNT, block=self.block_ms) or [])
        for share in self._shares:
            if share.packed is None:
                share.build(self.last_ids)
        commands = [share.command for share in self._shares]
        packed = b"".join(share.packed or b"" for share in self._shares)
        # Each share on its own: a Cluster master that is down answers its shares with the
        # error, and the others' events still flow (the status names the lost master).
        replies = await fastpipe.execute(client, commands, packed)
        lost = sorted({reply.node for reply in replies if isinstance(reply, NodeUnreachable)})
        self.lost = ", ".join(lost)
        found = []
        for reply in replies:
            if isinstance(reply, NodeUnreachable):
                continue
            if isinstance(reply, Exception):
                raise reply
            # RESP3 answers a map of streams, RESP2 a list of pairs.
            pairs = reply.items() if isinstance(reply, dict) else reply or []
            for stream_key, entries in pairs:
                found.append([stream_key, [(id_, _as_fields(fields)) for id_, fields in entries]])
        if not found:
            await asyncio.sleep(POLL_S)
        return found

    def _moved(self, stream_key: str) -> None:
        """``stream_key``'s last id moved: its share's XREAD is built again before the next."""
        for share in self._shares or ():
            if stream_key in share.keys:
                share.packed = None
                return

    async def reset(self) -> None:
        """Drop the reading connection (a new one is made for the next read)."""
        if self._client is not None:
            with contextlib.suppress(Exception):
                await close_client(self._client)
        self._client = None


def _as_fields(fields: Any) -> dict[str, str]:
    """An entry's fields as redis-py's XREAD gives them: a dict (the raw reply is a flat list)."""
    if isinstance(fields, dict):
        return fields
    flat = list(fields or [])
    return dict(zip(flat[0::2], flat[1::2], strict=True))


class _Share:
    """Some streams read by one XREAD without blocking, its RESP kept while their ids stay."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = frozenset(keys)
        self.ordered = keys
        self.command: tuple[Any, ...] = ()
        self.packed: bytes | None = None

    def build(self, last_ids: dict[str, str]) -> None:
        ids = (last_ids.get(key, "$") for key in self.ordered)
        self.command = ("XREAD", "COUNT", READ_COUNT, "STREAMS", *self.ordered, *ids)
        self.packed = fastpipe.pack_uncached([self.command])


def _shares(keys: list[str], size: int, cluster: bool) -> list[_Share]:
    """``keys`` in shares of at most ``size``, each within one Cluster slot on a Cluster."""
    groups: dict[int, list[str]] = {}
    for key in keys:
        groups.setdefault(key_slot(key.encode()) if cluster else 0, []).append(key)
    return [
        _Share(group[start : start + size])
        for group in groups.values()
        for start in range(0, len(group), size)
    ]
