"""Pages served from what the live reader knows: a view of the overview while a reader follows
every queue reads Redis for what the reader cannot vouch for only, and its socket resumes from
the version of the counts the page shows."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from functools import partial
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient, override_settings
from django.urls import reverse

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from queues.alerts.rules import read_rules
from queues.alerts.state import Notice
from queues.alerts.thresholds import COUNTED
from queues.alerts.watch import AlertWatch, DeliverySettings
from queues.live.follower import Follower
from queues.reads.counts import summaries
from queues.reads.discovery import discovered
from queues.reads.keys import QueueRef
from queues.redis import reachability
from tests.support.live_reads import (
    TRIES,
    Message,
    TellingCounts,
    _unread,
    calls,
    cheapest,
    counts_of,
    event_taken,
    grown,
    reader_fresh,
    run_peer,
    since_of,
    spec_of,
    until,
    vouches,
    wait_for,
    while_reader_vouches,
)
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

# Every alert rule on, as an operator who wants them all has them.
EVERY_RULE = {
    "failure_rate_percent": 10,
    "run_p95_ms": 2000,
    "wait_p95_ms": 60_000,
    "oldest_waiting_seconds": 0,
    "no_workers_seconds": 300,
    "stalled_last_hour": 10,
    "scheduler_overdue_seconds": 0,
}
TENANTS = 100  # two queues each: many more queues than one page of the overview lists


@pytest.fixture
async def sockets() -> AsyncIterator[list[WebsocketCommunicator]]:
    opened: list[WebsocketCommunicator] = []
    yield opened
    for communicator in opened:
        _unread.pop(id(communicator), None)
        await communicator.disconnect()
    await channel_groups.stop()


async def connect(sockets: list[WebsocketCommunicator]) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
    connected, _ = await communicator.connect()
    assert connected
    sockets.append(communicator)
    return communicator


async def overview_watched(
    sockets: list[WebsocketCommunicator],
) -> tuple[WebsocketCommunicator, Follower, list[QueueRef]]:
    """A socket watching the overview, once the reader it started keeps every queue's counts;
    the socket, the reader and the queues."""
    watcher = await connect(sockets)
    await watcher.send_json_to({"watch": "overview"})
    follower, refs = channel_groups.ensure_started(), list((await discovered()).queues)
    await until("the reader keeps every queue's counts", lambda: vouches(follower, refs), 30)
    return watcher, follower, refs


@pytest.fixture
async def many_queues(peer: Peer) -> None:
    await run_peer(peer, "many-queues", "--count", str(TENANTS), "--services", "mail,billing")


async def test_a_view_of_the_overview_while_live_costs_at_most_a_command_a_queue(
    many_queues: None,
    sockets: list[WebsocketCommunicator],
    client: AsyncClient,
    redis_client: Any,
) -> None:
    _watcher, follower, refs = await overview_watched(sockets)
    queues = len(refs)
    # Without the reader's counts (a page with none to take): eight commands a queue at least.
    per_page = partial(view_cost, client, redis_client, "?per_page=25")
    cost = await cheapest(follower, refs, per_page, queues, by_report=True)
    assert sum(cost.values()) <= queues, cost
    # Counts and meta are not read at all: what is read is the page's rows' sparklines, the
    # alerts of queues that keep failed jobs, workers and stuck jobs.
    assert "zcard" not in cost and "llen" not in cost, cost

    api = reverse("bullpen:api-queues")

    async def listed() -> dict[str, int]:
        before = calls(redis_client)
        response = await client.get(api)
        assert response.status_code == 200 and len(response.json()["queues"]) == 100
        return grown(before, calls(redis_client))

    cost = await cheapest(follower, refs, listed, queues)
    assert "zcard" not in cost and sum(cost.values()) <= queues, cost


async def view_cost(client: AsyncClient, redis_client: Any, query: str) -> dict[str, int] | None:
    """The Redis commands one view of the overview ran; None when the page says the reader
    did not vouch for every queue it lists (no version: it read them from Redis)."""
    before = calls(redis_client)
    response = await client.get(reverse("bullpen:overview") + query)
    assert response.status_code == 200
    cost = grown(before, calls(redis_client))
    return cost if since_of(response.content.decode()) else None


@pytest.fixture
def in_shares(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    """A reader that reads the streams in shares of 64 and reads 50 queues' counts a pass, as
    it does 10,000 and 2,000 at 50,000 queues."""
    live = {"read_share": 64, "exact_batch": 50}
    with override_settings(BULLPEN={**bullpen_settings, "LIVE": live}):
        yield


async def test_a_view_takes_the_counts_of_a_reader_reading_in_shares(
    in_shares: None,
    many_queues: None,
    sockets: list[WebsocketCommunicator],
    client: AsyncClient,
    redis_client: Any,
    peer: Peer,
) -> None:
    watcher, follower, refs = await overview_watched(sockets)
    queues = len(refs)
    assert follower.streams.shares == 4, follower.streams.shares  # 200 streams, 64 a share

    # Events reach the counts whichever share their stream is read in.
    for name in ("t001-billing", "t100-mail"):
        await run_peer(peer, "add", "--queue", name, "--name", "late", "--data", "{}")
    await wait_for(watcher, lambda m: (counts_of(m, "t100-mail") or {}).get("waiting") == 1)

    async def found() -> tuple[dict[str, Any], dict[str, int]]:
        before = calls(redis_client)
        response = await client.get(reverse("bullpen:api-queues") + "?q=t100-mail")
        cost = grown(before, calls(redis_client))
        assert response.status_code == 200
        (queue,) = response.json()["queues"]
        return queue, cost

    queue, cost = await while_reader_vouches(follower, refs, found)
    assert queue["counts"]["waiting"] == 1
    assert "zcard" not in cost and "llen" not in cost and sum(cost.values()) <= queues, cost

    per_page = partial(view_cost, client, redis_client, "?per_page=25")
    cost = await cheapest(follower, refs, per_page, queues, by_report=True)
    assert "zcard" not in cost and "llen" not in cost and sum(cost.values()) <= queues, cost


async def test_a_socket_resumes_from_the_version_its_page_shows(
    many_queues: None,
    sockets: list[WebsocketCommunicator],
    client: AsyncClient,
    peer: Peer,
) -> None:
    _watcher, follower, refs = await overview_watched(sockets)
    queues = len(refs)
    found, why = None, list[str]()
    for _ in range(TRIES):  # until one try found the reader current throughout
        found = found or await resumed_twice(sockets, client, peer, follower, refs, why)
    assert found, f"the reader was not current in any of {TRIES} tries: {why}"
    since, quiet, everything, resumed = found
    assert re.fullmatch(r"[0-9a-f]{8}:\d+", since), since

    # Nothing changed since the page was rendered: only the totals come.
    assert len(quiet["queues"]) < queues, (since, follower.counts.version)
    (totals,) = quiet["totals"].values()
    assert totals["queues"] == queues
    assert totals["counts"]["waiting"] == sum(
        entry["counts"].get("waiting", 0) for entry in everything["queues"]
    )

    # A job added between the render and the subscription is not lost.
    assert counts_of(resumed, "t001-mail") is not None
    assert len(resumed["queues"]) < queues

    # A version of another era (another process, a restart) gets every queue's counts.
    third = await connect(sockets)
    await third.send_json_to({"watch": "overview", "since": "00000000:1"})
    everything, _ = await wait_for(third, lambda m: m["type"] == "counts")
    assert len(everything["queues"]) == queues


async def resumed_twice(
    sockets: list[WebsocketCommunicator],
    client: AsyncClient,
    peer: Peer,
    follower: Follower,
    refs: list[QueueRef],
    why: list[str],
) -> tuple[str, Message, Message, Message] | None:
    """The overview's version, what a socket resuming from it is sent while nothing changed,
    every queue's counts then, and what one is sent after a job was added; None when the reader
    could not vouch (a page reads Redis: no version; a socket: no totals) or started over."""
    await reader_fresh(follower, refs)
    since = since_of((await client.get(reverse("bullpen:overview"))).content.decode())
    if not since:
        why.append("a page without a version")
        return None
    # The reader's periodic resend of every count (for sockets that may have missed one)
    # comes between the render and the subscription: it changed nothing.
    follower.chores.full_refresh.hurry()
    follower.chores.resend_counts.hurry()
    await until("a resend of every count", lambda: follower.counts.version != since)
    first = await connect(sockets)
    await first.send_json_to({"watch": "overview", "since": since})
    quiet, _ = await wait_for(first, lambda m: m["type"] == "counts")
    everything = await full_counts(sockets)
    if not (follower.counts.era == since.partition(":")[0] and "totals" in quiet):
        why.append(f"the first socket: era {follower.counts.era}, {sorted(quiet)}")
        return None

    sent = follower.counts.version
    await run_peer(peer, "add", "--queue", "t001-mail", "--name", "late", "--data", "{}")
    await until("the added job's counts sent", lambda: follower.counts.version != sent, 30)
    await reader_fresh(follower, refs)
    second = await connect(sockets)
    await second.send_json_to({"watch": "overview", "since": since})
    resumed, _ = await wait_for(second, lambda m: m["type"] == "counts")
    if not (follower.counts.era == since.partition(":")[0] and "totals" in resumed):
        why.append(f"the second socket: era {follower.counts.era}, {sorted(resumed)}")
        return None
    return since, quiet, everything, resumed


async def answered(socket: WebsocketCommunicator, spec: dict[str, Any]) -> list[Any]:
    """What the socket is sent for ``spec`` until it has handled it: a message after it that
    it refuses is handled after it, so its refusal closes what the watch was sent."""
    await socket.send_json_to(spec)
    await socket.send_json_to([])
    refusal, before = await wait_for(socket, lambda m: m["type"] == "error")
    assert "JSON object" in refusal["error"]
    return before


async def test_a_queue_page_socket_keeps_the_list_its_page_read_while_nothing_happened(
    many_queues: None,
    sockets: list[WebsocketCommunicator],
    client: AsyncClient,
    peer: Peer,
) -> None:
    await overview_watched(sockets)
    url = reverse("bullpen:queue", args=["t001-mail"])
    spec = spec_of((await client.get(url)).content.decode())
    assert spec["list_at"], spec

    # No event of the queue since the page read its list: its socket reads none again.
    sent = [m for m in await answered(await connect(sockets), spec) if m["type"] != "status"]
    assert [m["type"] for m in sent] == ["counts", "list"], sent
    assert sent[-1] == {"type": "list", "queue": "t001-mail", "stands": True}

    # A job added between the page's read and its socket's watch: the list is read again.
    follower, ref = channel_groups.ensure_started(), QueueRef("bull", "t001-mail")
    before = follower.counts.events_taken.get(ref, 0)
    added = await run_peer(peer, "add", "--queue", "t001-mail", "--name", "late", "--data", "{}")
    await event_taken(follower, ref, before)
    sent = await answered(await connect(sockets), spec)
    (listed,) = [m for m in sent if m["type"] == "list"]
    assert f'data-job-id="{added["id"]}"' in listed["html"]

    # A page whose reader could not say where it stood reads its list, as before.
    sent = await answered(await connect(sockets), {**spec, "list_at": ""})
    (listed,) = [m for m in sent if m["type"] == "list"]
    assert "stands" not in listed and 'data-job-id="' in listed["html"]


async def full_counts(sockets: list[WebsocketCommunicator]) -> dict[str, Any]:
    """Every queue's counts, as a socket without a version gets them."""
    socket = await connect(sockets)
    await socket.send_json_to({"watch": "overview"})
    found, _ = await wait_for(socket, lambda m: m["type"] == "counts")
    return found


async def test_an_alert_pass_while_live_reads_no_counts(
    many_queues: None,
    sockets: list[WebsocketCommunicator],
    client: AsyncClient,
    redis_client: Any,
    bullpen_settings: dict[str, Any],
    peer: Peer,
) -> None:
    """The alert sender runs where the live reader does (the lease): it takes its counts too.
    With every rule on, a pass over these 200 queues costs Redis no more than a view of the
    overview (at 2,000 the oldest waiting jobs' reads make it more: bench/RESULTS.md)."""
    _watcher, _follower, refs = await overview_watched(sockets)
    made: list[TellingCounts] = []  # each pass's: whether the reader vouched for every queue

    def reader_counts() -> TellingCounts:
        made.append(TellingCounts())
        return made[-1]

    watch = AlertWatch(nowhere, lambda: True, known_counts=reader_counts)
    delivery = DeliverySettings(webhooks=("http://127.0.0.1:9/nowhere",))
    every_rule = override_settings(BULLPEN={**bullpen_settings, "ALERTS": EVERY_RULE})
    every_rule.enable()  # for the whole test: a change of settings starts a new reader
    try:
        await check_alert_passes(watch, made, delivery, client, redis_client, peer, refs)
    finally:
        every_rule.disable()


async def check_alert_passes(
    watch: AlertWatch,
    made: list[TellingCounts],
    delivery: DeliverySettings,
    client: AsyncClient,
    redis_client: Any,
    peer: Peer,
    refs: list[QueueRef],
) -> None:
    follower, queues = channel_groups.ensure_started(), len(refs)

    async def a_pass() -> dict[str, int] | None:
        era = follower.counts.era
        await watch.evaluate(delivery)  # the first pass reads what later ones keep
        before = calls(redis_client)
        await watch.evaluate(delivery)
        cost = grown(before, calls(redis_client))
        vouched = all(counts.vouched for counts in made[-2:]) and follower.counts.era == era
        return cost if vouched else None

    cost = await while_reader_vouches(follower, refs, a_pass, by_report=True)
    a_view = partial(view_cost, client, redis_client, "")
    view = await while_reader_vouches(follower, refs, a_view, by_report=True)
    # Without the reader (the rules over counts read from Redis): seven commands a queue.
    before = calls(redis_client)
    await read_rules(await summaries(states=COUNTED))
    cold = grown(before, calls(redis_client))
    print(f"{queues} queues while live: a pass {sum(cost.values())}, a view {sum(view.values())}")
    assert "zcard" not in cost and "llen" not in cost, cost
    # Nothing happened to any queue since the pass before: no oldest waiting job is read.
    assert "lindex" not in cost, cost
    assert sum(cost.values()) <= sum(view.values()), (cost, view)
    assert cold.get("zcard", 0) >= 2 * queues and cold.get("lindex", 0) >= TENANTS

    # A job added to one queue since the pass before: its oldest waiting job alone is read
    # again, and the rules decide what a pass that reads every queue decides. Again when the
    # reader could not vouch meanwhile (it then keeps no queue's oldest job).
    ref = next(ref for ref in refs if ref.name == "t002-mail")
    for _ in range(TRIES):
        await reader_fresh(follower, refs)
        era, before_add = follower.counts.era, TellingCounts()
        await read_rules(await summaries(states=COUNTED, known=before_add), still=before_add.still)
        taken = follower.counts.events_taken.get(ref, 0)
        await run_peer(peer, "add", "--queue", "t002-mail", "--name", "late", "--data", "{}")
        await event_taken(follower, ref, taken)
        await reader_fresh(follower, refs)
        known, still = TellingCounts(), TellingCounts()
        found = await summaries(states=COUNTED, known=known)
        now_ms = int(time.time() * 1000)  # one moment for both: ages are whole seconds
        before = calls(redis_client)
        kept = await read_rules(found, now_ms, still=still.still)
        again = grown(before, calls(redis_client))
        told = [before_add.vouched, known.vouched, still.vouched, follower.counts.era == era]
        if all(told):
            break
    assert all(told), f"the reader was not current in {TRIES} tries"
    every = await read_rules(found, now_ms)
    assert 1 <= again.get("lindex", 0) <= 2, again
    assert kept.alerts == every.alerts and kept.alerts


async def nowhere(notice: Notice, targets: frozenset[str], later: bool) -> frozenset[str]:
    return frozenset()


async def test_a_failed_read_beside_the_readers_counts_says_the_queues_show_them(
    peer: Peer, sockets: list[WebsocketCommunicator], client: AsyncClient
) -> None:
    """A read that fails while the page is made from the reader's counts (Redis paused: the
    page's worker list timed out, the rows came from the reader) names the connection, and
    says the queues listed show the counts last read, not that they are not listed."""
    await run_peer(peer, "add", "--queue", "mail", "--name", "send", "--data", "{}")
    _watcher, _follower, _refs = await overview_watched(sockets)
    for _ in range(TRIES):
        # As a timed-out read of the connection records it (its reads are then skipped a
        # while: the page takes the reader's counts, or lists nothing of it).
        reachability.note_down("default", "Timeout reading from the test's Redis")
        page = (await client.get("/queues/")).content.decode()
        banner = re.search(r'<p class="warn"[^>]*data-testid="unreachable".*?</p>', page, re.S)
        listed = 'data-queue="mail"' in page
        if banner is None:
            continue  # the reader lagged: the page read Redis itself, which answered
        if not listed:
            assert "its queues are not listed" in banner.group(0)
            continue  # the reader lagged and the page left the connection out: as it says
        assert "its queues show the counts last read" in banner.group(0)
        assert "not listed" not in banner.group(0)
        reachability.note_up("default")
        page = (await client.get("/queues/")).content.decode()
        assert 'data-testid="unreachable"' not in page and 'data-queue="mail"' in page
        return
    raise AssertionError(f"the reader did not vouch for any of {TRIES} pages")
