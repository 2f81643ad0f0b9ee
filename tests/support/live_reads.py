"""Helpers that several test modules share.

Moved here from ``tests.live.test_live``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import websockets
from channels.testing import WebsocketCommunicator

from dashboard.live import channel_groups
from dashboard.live.reader_counts import ReaderCounts
from queues.live.follower import READER_SLACK, Follower
from queues.live.protocol import LiveMessage, Topic
from queues.live.streams import POLL_S
from queues.reads.keys import STATES, QueueRef
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

Message = dict[str, Any]


async def wait_for(
    socket: WebsocketCommunicator,
    predicate: Callable[[Message], bool],
    timeout: float = 15,  # noqa: ASYNC109 - one deadline across many receives
) -> tuple[Message, list[Message]]:
    """Receive until a message matches; return it and everything received before it."""
    seen: list[Message] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            message = await receive(socket, max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        if predicate(message):
            return message, seen
        seen.append(message)
    raise AssertionError(f"no matching message in {timeout}s; got {seen!r:.1500}")


_unread: dict[int, list[Message]] = {}


async def receive(socket: WebsocketCommunicator, timeout: float) -> Message:  # noqa: ASYNC109
    """The next message, with a ``batch`` taken apart as the page does."""
    unread = _unread.setdefault(id(socket), [])
    while not unread:
        message = await socket.receive_json_from(timeout=timeout)
        unread.extend(message["messages"] if message.get("type") == "batch" else [message])
    return unread.pop(0)


def counts_of(message: Message, slug: str) -> dict[str, int] | None:
    """A queue's counts in a counts message, every state filled in (the overview's leave out
    the states without jobs)."""
    if message.get("type") != "counts":
        return None
    found = next((q["counts"] for q in message["queues"] if q["slug"] == slug), None)
    return None if found is None else {state: found.get(state, 0) for state in STATES}


async def run_peer(peer: Peer, *args: str) -> Any:
    return await asyncio.to_thread(peer, *args)


async def until(what: str, done: Callable[[], bool], timeout: float = 15) -> None:  # noqa: ASYNC109
    """Poll ``done`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        await asyncio.sleep(0.05)


async def event_taken(follower: Follower, ref: QueueRef, taken: int) -> None:
    """The reader has taken an event of ``ref`` past the ``taken`` it had taken before."""
    await until("its event taken", lambda: follower.counts.events_taken.get(ref, 0) > taken, 30)


async def found_within(check: Callable[[], Any], within: float = 20) -> Any:
    """Poll ``check`` until it gives something true, and give that; fail after ``within`` s."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"not within {within}s")


async def publish_nowhere(topic: Topic, message: LiveMessage) -> None:
    """A follower's publish for tests that read the follower, not what it sends."""


async def follower_tails_log(job_id: str) -> None:
    """This process's live follower has noted the job's log length: from its next pass on, the
    job's state, progress and new log lines reach the sockets that watch it."""
    follower = channel_groups.ensure_started()
    await until(
        f"the follower tails job {job_id}'s log",
        lambda: any(job == job_id for _, job in follower.logs.lengths),
    )


# Where each server process publishes what its pages watch (queues/live/interest.py).
INTEREST_KEY = "bullpen:live:interest"


async def server_watches(
    redis_client: Any, *, queue: str = "", job: str = "", overview: bool = False
) -> None:
    """A live server (another process) has taken a page's watch of ``queue``, of ``job`` or of
    the overview: its follower publishes what its pages watch in the same pass in which it
    starts serving it (read through the test's own Redis connection, not written)."""

    def published() -> bool:
        for raw in redis_client.hgetall(INTEREST_KEY).values():
            entry = json.loads(raw)
            if overview and entry.get("overview"):
                return True
            if queue and queue in entry["queues"]:
                return True
            if job and any(watched == job for _, watched in entry["jobs"]):
                return True
        return False

    await until(f"a server watches {queue or job or 'the overview'}", published)


def spec_of(page: str) -> dict[str, Any]:
    """What a page's live updates watch (its ``data-live``)."""
    found = re.search(r'<main id="main"[^>]*data-live="([^"]*)"', page)
    assert found, "the page has no live spec"
    return dict(json.loads(html.unescape(found.group(1))))


def since_of(page: str) -> str:
    """The version of the reader's counts a page shows ("": some were read from Redis)."""
    return str(spec_of(page).get("since", ""))


def calls(redis_client: Any) -> dict[str, int]:
    """Redis's count of each command run so far (INFO commandstats)."""
    stats = redis_client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(entry["calls"]) for name, entry in stats.items()}


def grown(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The commands run between two INFOs, less the INFO that read ``before``."""
    cost = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    cost["info"] = cost.get("info", 1) - 1
    return {k: v for k, v in cost.items() if v}


LOOK_EVERY = 0.02  # seconds between two looks at a reader through a stretch of a test
FRESH = 0.5  # a stretch begins once the reader vouches this much longer without reading


def vouched_for(follower: Follower, refs: list[QueueRef]) -> float:
    """How many seconds more the reader vouches for every one of ``refs`` (as a page takes
    them, ``Follower.known_summaries``) without reading the streams or renewing its lease
    again: what is left of ``Follower.current``'s limits. 0 when it does not now."""
    known, version = follower.known_summaries(refs)
    if version is None or len(known) < len(refs):
        return 0.0
    streams, lease, now = follower.streams, follower.leadership, time.monotonic()
    # StreamReader.caught_up_within's limit: one read's wait, the read pause and the slack.
    one_read = len(streams.refs) <= streams.share and streams.shares < 2
    wait = streams.block_ms / 1000 if one_read else POLL_S + streams.read_time
    caught_up = streams.caught_up_at + wait + streams.read_pause + READER_SLACK - now
    leased = lease.confirmed_at + lease.lease_ttl_ms / 1000 - now
    return max(0.0, min(caught_up, leased))


def vouches(follower: Follower, refs: list[QueueRef]) -> bool:
    return vouched_for(follower, refs) > 0


class ReaderSpell:
    """What the looks at a reader found through one stretch of a test: it vouched all along
    when each look came within the time the look before found it would vouch for."""

    def __init__(self, follower: Follower, refs: list[QueueRef]) -> None:
        self.follower, self.refs = follower, refs
        self.era = follower.counts.era
        self.last_look = time.monotonic()
        self.left = vouched_for(follower, refs)
        self.held = True
        self.why = ""

    def look(self) -> None:
        now = time.monotonic()
        if now - self.last_look >= self.left:
            self._broken(f"not looked at for {now - self.last_look:.2f}s, {self.left:.2f}s left")
        elif self.follower.counts.era != self.era:
            self._broken("its counts started over (a new era)")
        self.left = vouched_for(self.follower, self.refs)
        self.last_look = now

    def _broken(self, why: str) -> None:
        if self.held:
            self.held, self.why = False, why


async def reader_fresh(
    follower: Follower,
    refs: list[QueueRef],
    within: float = 30,
) -> None:
    """Wait until the reader vouches for every one of ``refs``, and will for a while yet."""

    def fresh() -> bool:
        return vouched_for(follower, refs) >= FRESH

    await until("the reader keeps every queue's counts", fresh, within)


@contextlib.asynccontextmanager
async def reader_vouching(
    follower: Follower,
    refs: list[QueueRef],
    within: float = 30,
) -> AsyncIterator[ReaderSpell]:
    """Once the reader vouches for every one of ``refs`` (its own report), look at it through
    the block: the spell says afterwards whether it vouched all along. On a loaded machine a
    pause of this process can leave it behind for a moment, and a page then rightly reads Redis."""
    await reader_fresh(follower, refs, within)
    spell = ReaderSpell(follower, refs)

    async def keep_looking() -> None:
        while True:
            await asyncio.sleep(LOOK_EVERY)
            spell.look()

    looking = asyncio.ensure_future(keep_looking())
    try:
        yield spell
    finally:
        looking.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await looking
        spell.look()


T = TypeVar("T")
TRIES = 8


async def while_reader_vouches(
    follower: Follower,
    refs: list[QueueRef],
    measure: Callable[[], Awaitable[T | None]],
    *,
    by_report: bool = False,
) -> T:
    """What ``measure`` found in the first of a few stretches through which the reader vouched
    for every one of ``refs``; ``measure`` gives None when what it measured says otherwise (a
    page rendered without the reader's version). ``by_report``: that alone says so (the page
    took the reader's counts at one moment, which looks from outside may miss). Fails when
    none of them was such a stretch."""
    why: list[str] = []
    for _ in range(TRIES):
        async with reader_vouching(follower, refs) as spell:
            found = await measure()
        if (spell.held or by_report) and found is not None:
            return found
        why.append("what was measured came from Redis" if by_report else spell.why)
    raise AssertionError(f"the reader did not stay current through any of {TRIES} tries: {why}")


class TellingCounts(ReaderCounts):
    """The reader's counts for one alert pass (or page), which tell afterwards whether the
    reader vouched for every queue it was asked about: their counts (``complete``) and that
    nothing happened to them since the pass before (``still``, which keeps their oldest jobs)."""

    def __init__(self) -> None:
        super().__init__()
        self.unsure = 0  # queues ``still`` could say nothing of

    def still(self, ref: QueueRef) -> tuple[str, int] | None:
        token = super().still(ref)
        self.unsure += token is None
        return token

    @property
    def vouched(self) -> bool:
        return self.complete and not self.unsure


async def watch_overview(server: LiveServer) -> Any:
    """A socket to ``server`` that watches the overview, as an open overview page's does."""
    ws_url = server.url.replace("http://", "ws://") + "/ws/bullpen/"
    socket = await websockets.connect(ws_url, origin=server.url)  # type: ignore[arg-type]
    await socket.send(json.dumps({"watch": "overview"}))
    return socket


async def cheapest(
    follower: Follower,
    refs: list[QueueRef],
    measure: Callable[[], Awaitable[dict[str, int] | None]],
    budget: int,
    *,
    by_report: bool = False,
    tries: int = 3,
) -> dict[str, int]:
    """The Redis commands of the cheapest of up to ``tries`` views measured while the reader
    vouched (the first within ``budget``): Redis counts every client's commands, and through a
    view slowed by a loaded machine the reader's own reads (streams, lease, quiet re-reads) fall
    into its window too."""
    costs: list[dict[str, int]] = []
    for _ in range(tries):
        costs.append(await while_reader_vouches(follower, refs, measure, by_report=by_report))
        if sum(costs[-1].values()) <= budget:
            break
    return min(costs, key=lambda cost: sum(cost.values()))
