"""One dashboard over two Redis servers: a queue named "mail" on each, written by Node BullMQ,
kept apart in the API, the pages, actions, the audit log, live counts and metrics; and with one
server stopped, the other's queues go on."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient, override_settings

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from dashboard.models import AuditEntry
from tests.support.action_waits import accepted, finished
from tests.support.live_reads import counts_of, wait_for
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
TOKEN = "metrics-token"  # noqa: S105 - the scrape token of these tests


@pytest.fixture(scope="module")
def us_server() -> Iterator[RedisServer]:
    """A second redis-server: the "us" connection (the session's server is "eu")."""
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def two_connections(
    bullpen_settings: dict[str, Any], redis_server: RedisServer, us_server: RedisServer
) -> Iterator[dict[str, Peer]]:
    if us_server.process is None or us_server.process.poll() is not None:
        us_server.start()
    with us_server.client() as client:
        client.flushall()
    config = {k: v for k, v in bullpen_settings.items() if k != "REDIS_URL"}
    config["CONNECTIONS"] = {"eu": {"URL": redis_server.url}, "us": {"URL": us_server.url}}
    config["METRICS_TOKEN"] = TOKEN
    with override_settings(BULLPEN=config):
        yield {"eu": Peer(redis_server.url), "us": Peer(us_server.url)}


async def node(peer: Peer, *args: str) -> Any:
    return await asyncio.to_thread(peer, *args)


async def seed(peers: dict[str, Peer]) -> None:
    """mail@eu: 1 failed job and 2 waiting (ids 1; 2, 3); mail@us: 2 failed and 3 waiting
    (ids 1, 2; 3, 4, 5). The same ids on both: only the connection tells them apart."""
    for where, failed, waiting in (("eu", 1, 2), ("us", 2, 3)):
        peer = peers[where]
        for _ in range(failed):
            await node(peer, "add", "--queue", "mail", "--name", f"{where}-doomed", "--data", "{}")
        await node(peer, "work", "--queue", "mail", "--fail", "--count", str(failed))
        for _ in range(waiting):
            await node(peer, "add", "--queue", "mail", "--name", f"{where}-job", "--data", "{}")


def counts_in_node(peer: Peer) -> dict[str, int]:
    counts: dict[str, int] = peer("inspect", "--queue", "mail")["countsAll"]
    return counts


async def test_same_named_queues_on_two_servers_stay_apart(
    two_connections: dict[str, Peer], client: AsyncClient
) -> None:
    peers = two_connections
    await seed(peers)

    listed = (await client.get("/queues/api/queues/")).json()
    entries = {q["slug"]: q for q in listed["queues"]}
    assert set(entries) == {"mail@eu", "mail@us"}
    assert entries["mail@eu"]["connection"] == "eu" and entries["mail@us"]["connection"] == "us"
    assert entries["mail@eu"]["name"] == entries["mail@us"]["name"] == "mail"
    assert entries["mail@eu"]["counts"]["waiting"] == 2
    assert entries["mail@us"]["counts"]["waiting"] == 3
    assert entries["mail@us"]["counts"]["failed"] == 2
    assert listed["connections"] == [
        {"name": "eu", "reachable": True},
        {"name": "us", "reachable": True},
    ]
    grouped = (await client.get("/queues/api/queues/?group=connection")).json()
    assert {g["key"]: g["counts"]["waiting"] for g in grouped["groups"]} == {"eu": 2, "us": 3}

    # Each queue page lists its own jobs; the overview labels rows with their connection.
    us_page = (await client.get("/queues/q/mail@us/?state=waiting")).content.decode()
    eu_page = (await client.get("/queues/q/mail@eu/?state=waiting")).content.decode()
    assert us_page.count('<td class="job-name">us-job</td>') == 3 and "eu-job" not in us_page
    assert eu_page.count('<td class="job-name">eu-job</td>') == 2 and "us-job" not in eu_page
    overview = (await client.get("/queues/")).content.decode()
    assert 'data-queue="mail@eu"' in overview and 'data-queue="mail@us"' in overview
    assert '<span class="badge connection" data-testid="connection"' in overview
    # Job 1 exists on both servers: each job page shows its own.
    us_job = (await client.get("/queues/q/mail@us/jobs/1/")).content.decode()
    eu_job = (await client.get("/queues/q/mail@eu/jobs/1/")).content.decode()
    assert "us-doomed" in us_job and "eu-doomed" not in us_job
    assert "eu-doomed" in eu_job and "us-doomed" not in eu_job
    assert 'data-testid="connection" title="Redis connection">us</span>' in us_job
    found = (await client.get("/queues/api/find/?id=1")).json()
    assert sorted(match["queue"] for match in found["matches"]) == ["mail@eu", "mail@us"]
    api_jobs = (await client.get("/queues/api/queues/mail@us/jobs/?state=waiting")).json()
    assert sorted(job["id"] for job in api_jobs["jobs"]) == ["3", "4", "5"]
    # A link made while there was one server names the first (default) connection's queue,
    # and is sent on to its one name.
    old_link = await client.get("/queues/q/mail/?state=waiting")
    assert old_link.status_code in (301, 302, 308)
    assert old_link["Location"] == "/queues/q/mail@eu/?state=waiting"

    # Actions reach the right server, as Node sees it.
    retried = await client.post("/queues/api/queues/mail@us/jobs/1/retry/", headers=AUTH)
    assert retried.status_code == 200, retried.content[:300]
    removed = await client.post("/queues/api/queues/mail@eu/jobs/2/remove/", headers=AUTH)
    assert removed.status_code == 200, removed.content[:300]
    us_counts, eu_counts = counts_in_node(peers["us"]), counts_in_node(peers["eu"])
    assert (us_counts["failed"], us_counts["waiting"]) == (1, 4)
    assert (eu_counts["failed"], eu_counts["waiting"]) == (1, 1)

    rows = [
        (entry.action, entry.queue, entry.connection, entry.job_ids)
        async for entry in AuditEntry.objects.filter(result="ok").order_by("id")
    ]
    assert rows == [("retry", "mail@us", "us", ["1"]), ("remove", "mail@eu", "eu", ["2"])]

    scraped = await client.get("/queues/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    text = scraped.content.decode()
    assert (
        'bullpen_queue_jobs{connection="us",prefix="bull",queue="mail",state="waiting"} 4.0' in text
    )
    assert (
        'bullpen_queue_jobs{connection="eu",prefix="bull",queue="mail",state="waiting"} 1.0' in text
    )
    assert 'bullpen_redis_up{connection="us"} 1.0' in text


@pytest.fixture
async def socket() -> AsyncIterator[WebsocketCommunicator]:
    communicator = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
    connected, _ = await communicator.connect()
    assert connected
    yield communicator
    await communicator.disconnect()
    await channel_groups.stop()


async def test_live_counts_move_for_the_right_server(
    two_connections: dict[str, Peer], socket: WebsocketCommunicator
) -> None:
    peers = two_connections
    await seed(peers)
    await socket.send_json_to({"watch": "overview"})
    await wait_for(socket, lambda m: (counts_of(m, "mail@us") or {}).get("waiting") == 3)
    # One reader, with its own lease, per server.
    followers = channel_groups.followers()
    assert [f.connection for f in followers] == ["eu", "us"]
    for _ in range(100):
        if all(f.streams.refs for f in followers):
            break
        await asyncio.sleep(0.1)

    await node(peers["us"], "add", "--queue", "mail", "--name", "us-late", "--data", "{}")
    moved, seen = await wait_for(
        socket, lambda m: (counts_of(m, "mail@us") or {}).get("waiting") == 4
    )
    eu_entries = [counts_of(m, "mail@eu") for m in [*seen, moved]]
    assert all(c is None or c["waiting"] == 2 for c in eu_entries)

    await node(peers["eu"], "add", "--queue", "mail", "--name", "eu-late", "--data", "{}")
    moved, seen = await wait_for(
        socket, lambda m: (counts_of(m, "mail@eu") or {}).get("waiting") == 3
    )
    us_entries = [counts_of(m, "mail@us") for m in [*seen, moved]]
    assert all(c is None or c["waiting"] == 4 for c in us_entries)


async def test_a_stopped_server_leaves_the_other_working(
    two_connections: dict[str, Peer],
    us_server: RedisServer,
    client: AsyncClient,
    socket: WebsocketCommunicator,
) -> None:
    peers = two_connections
    await seed(peers)
    await socket.send_json_to({"watch": "overview"})
    await wait_for(socket, lambda m: (counts_of(m, "mail@us") or {}).get("waiting") == 3)
    us_server.stop()
    try:
        overview = await client.get("/queues/")
        assert overview.status_code == 200
        page = overview.content.decode()
        assert 'data-queue="mail@eu"' in page and 'data-queue="mail@us"' not in page
        assert 'data-testid="unreachable" data-connection="us"' in page
        listed = (await client.get("/queues/api/queues/")).json()
        assert [q["slug"] for q in listed["queues"]] == ["mail@eu"]
        assert listed["connections"][0] == {"name": "eu", "reachable": True}
        assert listed["connections"][1]["name"] == "us"
        assert listed["connections"][1]["reachable"] is False
        assert listed["connections"][1]["error"]
        # Reads over every queue go on without it: a job id is looked for on the other.
        found = (await client.get("/queues/api/find/?id=1")).json()
        assert [match["queue"] for match in found["matches"]] == ["mail@eu"]
        # Only the stopped server's pages answer 503.
        assert (await client.get("/queues/q/mail@us/")).status_code == 503
        assert (await client.get("/queues/q/mail@eu/")).status_code == 200
        scraped = await client.get("/queues/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        text = scraped.content.decode()
        assert 'bullpen_redis_up{connection="us"} 0.0' in text
        assert 'bullpen_redis_up{connection="eu"} 1.0' in text

        # The live page hears that "us" is down, and eu's counts keep coming.
        down, _ = await wait_for(
            socket, lambda m: m["type"] == "status" and m["redis"] == "down", timeout=20
        )
        assert down["connection"] == "us"
        await node(peers["eu"], "add", "--queue", "mail", "--name", "eu-late", "--data", "{}")
        await wait_for(socket, lambda m: (counts_of(m, "mail@eu") or {}).get("waiting") == 3)
    finally:
        us_server.start()


async def fail_on(peer: Peer, name: str, count: int) -> None:
    for _ in range(count):
        await node(peer, "add", "--queue", "mail", "--name", name, "--data", "{}")
    await node(peer, "work", "--queue", "mail", "--fail", "--count", str(count))


async def delay_on(peer: Peer, name: str, count: int) -> None:
    for _ in range(count):
        opts = '{"delay": 3600000}'
        await node(peer, "add", "--queue", "mail", "--name", name, "--data", "{}", "--opts", opts)


def node_view(peer: Peer) -> dict[str, Any]:
    """The queue as Node BullMQ reads it: its counts and whether it is paused."""
    seen = peer("inspect", "--queue", "mail")
    return {**seen["countsAll"], "paused": seen["isPaused"]}


async def test_every_bulk_action_acts_on_its_own_server_only(
    two_connections: dict[str, Peer], client: AsyncClient
) -> None:
    """Every kind of bulk action on ``mail@us`` changes us's queue, as Node sees it, and leaves
    eu's namesake as it was; its record, its status and its audit rows name us."""
    peers = two_connections
    us, eu = peers["us"], peers["eu"]
    for peer, where in ((eu, "eu"), (us, "us")):
        await fail_on(peer, f"{where}-doomed", 2)
        await delay_on(peer, f"{where}-later", 2)
    eu_before = node_view(eu)
    assert (eu_before["failed"], eu_before["delayed"]) == (2, 2)

    async def on_us(path: str, data: dict[str, str] | None = None) -> dict[str, Any]:
        answer = await client.post(f"/queues/api/{path}", data or {}, headers=AUTH)
        status = await finished(client, accepted(answer))
        assert status["state"] == "done", status
        assert node_view(eu) == eu_before, status  # the other server untouched
        assert status["queue"] == "mail@us" and status["id"].endswith("@us")
        return node_view(us)

    # Retry-all, of failed and of completed jobs.
    seen = await on_us("queues/mail@us/retry/?state=failed")
    assert (seen["failed"], seen["waiting"]) == (0, 2)
    await node(us, "work", "--queue", "mail", "--count", "2")
    seen = await on_us("queues/mail@us/retry/?state=completed")
    assert (seen["completed"], seen["waiting"]) == (0, 2)
    # Clean.
    await node(us, "work", "--queue", "mail", "--count", "2")
    seen = await on_us("queues/mail@us/clean/?state=completed&grace_ms=0")
    assert (seen["completed"], seen["waiting"]) == (0, 0)
    # Act on a search's matches: promote, remove, retry.
    seen = await on_us("queues/mail@us/search/promote/?q=us-later")
    assert (seen["delayed"], seen["waiting"]) == (0, 2)
    seen = await on_us("queues/mail@us/search/remove/?q=us-later&state=waiting")
    assert seen["waiting"] == 0
    await fail_on(us, "us-doomed", 2)
    seen = await on_us("queues/mail@us/search/retry/?q=us-doomed")
    assert (seen["failed"], seen["waiting"]) == (0, 2)
    # Promote-all.
    await delay_on(us, "us-later", 3)
    seen = await on_us("queues/mail@us/promote/")
    assert (seen["delayed"], seen["waiting"]) == (0, 5)
    # A failure group's retry and removal.
    await node(us, "work", "--queue", "mail", "--count", "5")
    await fail_on(us, "us-doomed", 2)
    groups = (await client.get("/queues/api/queues/mail@us/failure-groups/")).json()["groups"]
    signature = {"signature": groups[0]["signature"]}
    seen = await on_us("queues/mail@us/failure-groups/retry/", signature)
    assert (seen["failed"], seen["waiting"]) == (0, 2)
    await node(us, "work", "--queue", "mail", "--fail", "--count", "2")
    seen = await on_us("queues/mail@us/failure-groups/remove/", signature)
    assert (seen["failed"], seen["completed"]) == (0, 5)
    # The overview's group of us's queues: retry its failed jobs.
    await fail_on(us, "us-doomed", 1)
    grouped = await client.post(
        "/queues/api/groups/retry/", {"group": "connection", "key": "us"}, headers=AUTH
    )
    assert grouped.status_code == 200, grouped.content[:300]
    [action_id] = grouped.json()["actions"]
    assert action_id.endswith("@us")
    await finished(client, {"statusUrl": f"/queues/api/actions/{action_id}/"})
    assert node_view(eu) == eu_before and node_view(us)["failed"] == 0

    # Pause and resume: of us's group (eu stays as it was), then of every queue.
    group = {"group": "connection", "key": "us"}
    paused = await client.post("/queues/api/groups/pause/", group, headers=AUTH)
    assert paused.status_code == 200, paused.content[:300]
    assert node_view(us)["paused"] is True and node_view(eu) == eu_before
    resumed = await client.post("/queues/api/groups/resume/", group, headers=AUTH)
    assert resumed.status_code == 200, resumed.content[:300]
    assert node_view(us)["paused"] is False and node_view(eu) == eu_before
    assert (await client.post("/queues/api/pause-all/", headers=AUTH)).status_code == 200
    assert node_view(us)["paused"] is True and node_view(eu)["paused"] is True
    assert (await client.post("/queues/api/resume-all/", headers=AUTH)).status_code == 200
    assert node_view(us)["paused"] is False and node_view(eu) == eu_before

    # Every audit row names us; the actions list holds them all.
    audited = {(e.queue, e.connection) async for e in AuditEntry.objects.exclude(queue="")}
    assert audited == {("mail@us", "us")}
    listed = (await client.get("/queues/api/actions/")).json()["actions"]
    assert len(listed) == 10 and all(a["queue"] == "mail@us" for a in listed)


async def test_a_bulk_action_needs_only_its_own_server(
    two_connections: dict[str, Peer], redis_server: RedisServer, client: AsyncClient
) -> None:
    """With the default server (eu) stopped, a retry-all on us is recorded, run, followed and
    listed on us alone."""
    us = two_connections["us"]
    await fail_on(us, "us-doomed", 2)
    redis_server.stop()
    try:
        answer = await client.post("/queues/api/queues/mail@us/retry/?state=failed", headers=AUTH)
        status = await finished(client, accepted(answer))
        assert (status["state"], status["count"]) == ("done", 2)
        listed = (await client.get("/queues/api/actions/")).json()["actions"]
        assert [a["id"] for a in listed] == [status["id"]]
    finally:
        redis_server.start()
    assert node_view(us)["waiting"] == 2
