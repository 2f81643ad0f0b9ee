"""Per-queue access on real Redis with jobs written by Node BullMQ: a tenant sees and acts on
its own queues only, on every path data takes, and what it may not see answers as a queue that
does not exist."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, Permission, User
from django.test import AsyncClient, override_settings

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from dashboard.models import AuditEntry
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"amy": "amy-pass", "bob": "bob-pass", "operator": "s3cret-pass"}
# amy: tenant t1, operates t1-mail, only views t1-sms; the middle of t1-flow's tree is ops' own.
# bob: tenant t2. operator: everything.
OPS = "user:operator"
RULES = [
    {"QUEUES": "t1-flow-mid", "OPERATE": [OPS]},
    {"QUEUES": ["t1-mail", "t1-flow*"], "VIEW": ["scope:t1"], "OPERATE": ["scope:t1", OPS]},
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": [OPS]},
    {"QUEUES": "t2-*", "VIEW": ["scope:t2", "group:tenant2"], "OPERATE": ["scope:t2", OPS]},
    {"QUEUES": "*", "OPERATE": [OPS]},
]


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


@pytest.fixture
def tenants(bullpen_settings: dict[str, Any]) -> Iterator[dict[str, Any]]:
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(
        BASIC_AUTH_PLAIN=USERS,
        BASIC_AUTH_SCOPES={"amy": ["t1"], "bob": ["t2"]},
        QUEUE_ACCESS=RULES,
    )
    with override_settings(BULLPEN=config):
        yield config


@pytest.fixture
def jobs(peer: Peer, tenants: dict[str, Any]) -> dict[str, str]:
    """One waiting job "needle-<queue>" in each queue; job id 1 exists in all of them."""
    ids = {}
    for queue in ("t1-mail", "t1-sms", "t2-mail"):
        ids[queue] = peer("add", "--queue", queue, "--name", f"needle-{queue}")["id"]
    return ids


def same_page(one: bytes, other: bytes) -> bool:
    """The same answer but for the CSRF token, which is masked afresh for every page, and the
    websocket's ticket, which is signed with the second it was issued in."""
    token = rb'(X-CSRFToken": "|name="csrfmiddlewaretoken" value="|\?ticket=)[^"]+'
    return re.sub(token, rb"\1", one) == re.sub(token, rb"\1", other)


def names(body: dict[str, Any]) -> list[str]:
    return sorted(queue["slug"] for queue in body["queues"])


async def test_a_tenant_reads_only_its_own_queues(
    client: AsyncClient, jobs: dict[str, str]
) -> None:
    amy = auth("amy")
    listed = (await client.get("/queues/api/queues/", headers=amy)).json()
    assert names(listed) == ["t1-mail", "t1-sms"]
    assert listed["total"] == 2 and listed["totals"]["waiting"] == 2
    grouped = (await client.get("/queues/api/queues/?group=head", headers=amy)).json()
    assert [(g["key"], g["queues"]) for g in grouped["groups"]] == [("t1", 2)]
    everything = (await client.get("/queues/api/queues/", headers=auth("operator"))).json()
    assert names(everything) == ["t1-mail", "t1-sms", "t2-mail"]
    page = (await client.get("/queues/", headers=amy)).content.decode()
    assert "t1-mail" in page and "t2-mail" not in page

    # Another tenant's queue answers as one that does not exist, on every read.
    job = jobs["t2-mail"]
    for path in (
        "q/t2-mail/",
        f"q/t2-mail/jobs/{job}/",
        f"q/t2-mail/jobs/{job}/flow/",
        "q/t2-mail/groups/",
        "api/queues/t2-mail/jobs/",
        f"api/queues/t2-mail/jobs/{job}/",
        f"api/queues/t2-mail/jobs/{job}/flow/",
        "api/queues/t2-mail/search/?q=needle",
        "api/queues/t2-mail/workers/",
    ):
        hidden = await client.get("/queues/" + path, headers=amy)
        missing = await client.get("/queues/" + path.replace("t2-mail", "t1-none"), headers=amy)
        assert hidden.status_code == missing.status_code == 404, path
        assert same_page(hidden.content.replace(b"t2-mail", b"t1-none"), missing.content), path
    # Another spelling goes to the one name, as for any queue, and that answers 404.
    spelled = await client.get("/queues/q/bull:t2-mail/", headers=amy)
    assert spelled.status_code == 302 and spelled["Location"] == "/queues/q/t2-mail/"
    assert (await client.get("/queues/q/t2-mail/", headers=auth("bob"))).status_code == 200
    refused = AuditEntry.objects.filter(username="amy", queue="t2-mail", result="refused")
    assert await refused.acount() == 9
    assert await AuditEntry.objects.filter(queue="t1-none").acount() == 0

    # In-queue search, find by id, the switcher and alerts keep to what amy may view.
    search = await client.get(
        "/queues/api/queues/t1-mail/search/?state=waiting&q=needle", headers=amy
    )
    lines = [
        json.loads(line)
        for line in (b"".join([c async for c in search.streaming_content])).splitlines()
    ]
    assert [line["job"]["name"] for line in lines if line["type"] == "job"] == ["needle-t1-mail"]
    found = (await client.get("/queues/api/find/?id=1", headers=amy)).json()
    assert sorted(m["queue"] for m in found["matches"]) == ["t1-mail", "t1-sms"]
    found_page = await client.get("/queues/find/?id=1", headers=amy)
    assert b"t1-sms" in found_page.content and b"t2-mail" not in found_page.content
    suggested = await client.get("/queues/go/suggestions/?q=mail", headers=amy)
    assert b"t1-mail" in suggested.content and b"t2-mail" not in suggested.content
    went = await client.get("/queues/go/?q=t2-mail", headers=amy)
    assert went.status_code == 302 and "/q/t2-mail/" not in went["Location"]
    alerts = (await client.get("/queues/api/alerts/", headers=amy)).json()["alerts"]
    assert sorted(alerts) == ["t1-mail", "t1-sms"]
    # The search over every queue covers hers only, asked for every queue or by a pattern.
    for query, hers in (
        ("q=needle", {"t1-mail", "t1-sms"}),
        ("q=needle&queues=*-mail", {"t1-mail"}),
    ):
        everywhere = await client.get(f"/queues/api/search/?{query}", headers=amy)
        body = b"".join([chunk async for chunk in everywhere.streaming_content])
        matched = [json.loads(line) for line in body.splitlines()]
        assert {m["queue"] for m in matched if m.get("type") == "match"} == hers, query
        assert b"t2-mail" not in body, query
    ops = await client.get("/queues/api/search/?q=needle", headers=auth("operator"))
    ops_body = b"".join([chunk async for chunk in ops.streaming_content])
    assert b"needle-t2-mail" in ops_body


async def test_actions_follow_who_may_operate_which_queue(
    client: AsyncClient, jobs: dict[str, str], redis_client: Any
) -> None:
    amy = auth("amy")
    paused = await client.post("/queues/api/queues/t1-mail/pause/", headers=amy)
    assert paused.status_code == 200, paused.content
    assert redis_client.hget("bull:t1-mail:meta", "paused")
    view_only = await client.post("/queues/api/queues/t1-sms/pause/", headers=amy)
    assert view_only.status_code == 403 and "may only view 't1-sms'" in view_only.json()["error"]
    hidden = await client.post(
        f"/queues/api/queues/t2-mail/jobs/{jobs['t2-mail']}/remove/", headers=amy
    )
    assert hidden.status_code == 404
    assert hidden.json() == {"error": "Unknown queue 't2-mail'"}
    assert redis_client.exists(f"bull:t2-mail:{jobs['t2-mail']}")
    assert not redis_client.hget("bull:t1-sms:meta", "paused")
    rows = [
        (row.action, row.queue, row.status, row.result)
        async for row in AuditEntry.objects.filter(username="amy").order_by("id")
    ]
    assert rows == [
        ("pause", "t1-mail", 200, "ok"),
        ("pause", "t1-sms", 403, "refused"),
        ("remove", "t2-mail", 404, "refused"),
    ]

    # Resume-all and group actions: hidden queues are left out unsaid, view-only ones named.
    resumed = (await client.post("/queues/api/resume-all/", headers=amy)).json()
    assert resumed["skipped"] == ["t1-sms"] and "t2-mail" not in json.dumps(resumed)
    assert not redis_client.hget("bull:t1-mail:meta", "paused")
    group = {"group": "head", "key": "t1", "delimiter": "-"}
    grouped = (await client.post("/queues/api/groups/pause/", group, headers=amy)).json()
    assert grouped["skipped"] == ["t1-sms"] and grouped["count"] == 1
    assert redis_client.hget("bull:t1-mail:meta", "paused")
    other = await client.post("/queues/api/groups/pause/", {**group, "key": "t2"}, headers=amy)
    assert other.status_code == 404
    assert not redis_client.hget("bull:t2-mail:meta", "paused")

    # The audit page shows an operator the rows of the queues it may view.
    await client.post("/queues/api/queues/t2-mail/pause/", headers=auth("bob"))
    log = (await client.get("/queues/audit/", headers=amy)).content.decode()
    assert "t1-sms" in log and "t2-mail" not in log
    log = (await client.get("/queues/audit/", headers=auth("bob"))).content.decode()
    assert "t2-mail" in log and "t1-mail" not in log


async def test_a_flow_node_in_a_hidden_queue_shows_as_hidden(
    client: AsyncClient, peer: Peer, tenants: dict[str, Any]
) -> None:
    flow = peer("flow", "--queue", "t1-flow", "--children", "1", "--grandchildren", "1")
    leaf = flow["leaf"][0][0]
    tree = (
        await client.get(f"/queues/api/queues/t1-flow-leaf/jobs/{leaf}/flow/", headers=auth("amy"))
    ).json()
    root = tree["root"]
    assert root["queue"] == "t1-flow" and root["id"] == flow["root"]
    (middle,) = root["children"]
    assert middle == {"hidden": True, "children": [middle["children"][0]]}
    assert middle["children"][0]["queue"] == "t1-flow-leaf"
    page = await client.get(f"/queues/q/t1-flow-leaf/jobs/{leaf}/flow/", headers=auth("amy"))
    assert b'data-hidden="true"' in page.content and b"t1-flow-mid" not in page.content
    full = await client.get(
        f"/queues/api/queues/t1-flow-leaf/jobs/{leaf}/flow/", headers=auth("operator")
    )
    assert full.json()["root"]["children"][0]["queue"] == "t1-flow-mid"


async def test_a_session_user_sees_the_queues_of_its_groups(
    client: AsyncClient, jobs: dict[str, str]
) -> None:
    def make() -> User:
        user = User.objects.create_user("tina", is_staff=True)
        user.user_permissions.add(
            Permission.objects.get(codename="view", content_type__app_label="bullpen")
        )
        user.groups.add(Group.objects.create(name="tenant2"))
        return user

    user = await sync_to_async(make)()
    await client.aforce_login(user, backend="django.contrib.auth.backends.ModelBackend")
    listed = (await client.get("/queues/api/queues/")).json()
    assert names(listed) == ["t2-mail"]
    assert (await client.get("/queues/q/t2-mail/")).status_code == 200
    assert (await client.get("/queues/q/t1-mail/")).status_code == 404
    # A reader by its global permission: no buttons, whatever the rules say.
    assert b'data-testid="queue-actions"' not in (await client.get("/queues/q/t2-mail/")).content


async def next_of(
    socket: WebsocketCommunicator, received: list[dict[str, Any]], *kinds: str
) -> dict[str, Any]:
    """The next message of one of ``kinds``; every message is kept in ``received`` (status
    beats and live batches come meanwhile)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        message: dict[str, Any] = await socket.receive_json_from(timeout=20)
        received.append(message)
        if message["type"] in kinds:
            return message
    raise AssertionError(f"no {kinds} message; only {[m['type'] for m in received]}")


async def test_the_websocket_keeps_to_the_queues_its_user_may_view(
    peer: Peer, jobs: dict[str, str]
) -> None:
    headers = [(b"authorization", auth("amy")["Authorization"].encode())]
    socket = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/", headers)
    connected, _ = await socket.connect(timeout=10)
    assert connected
    received: list[dict[str, Any]] = []
    try:
        await socket.send_json_to({"watch": "queue", "queue": "t2-mail"})
        refused = await next_of(socket, received, "error", "counts", "list")
        assert refused == {"type": "error", "error": "no such queue"}
        rows = AuditEntry.objects.filter(username="amy", action="watch", result="refused")
        assert [row.queue async for row in rows] == ["t2-mail"]
        await socket.send_json_to({"watch": "overview"})
        counts = await next_of(socket, received, "counts", "error")
        assert sorted(entry["slug"] for entry in counts["queues"]) == ["t1-mail", "t1-sms"]
        await socket.send_json_to({"watch": "queue", "queue": "t1-sms"})
        counts = await next_of(socket, received, "counts", "error")
        assert [entry["slug"] for entry in counts["queues"]] == ["t1-sms"]
        # What the live follower pushes meanwhile (batches of counts) keeps to amy's queues.
        await asyncio.to_thread(peer, "add", "--queue", "t2-mail", "--name", "later")
        await asyncio.sleep(1.5)
        while not socket.output_queue.empty():
            received.append(await socket.receive_json_from())
        assert len(received) > 3 and "t2-mail" not in json.dumps(received)
    finally:
        await socket.disconnect()
        await channel_groups.stop()
