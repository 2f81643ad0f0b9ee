"""The search over every queue (``api/search/``): its NDJSON lines, the states and queues it
covers, redaction, the per-client limit, and a scan that stops when its client goes away; and
acting on a search's matches (``api/queues/<q>/search/<action>/``), checked by Node BullMQ."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from queues.search.step_pace import Pace
from tests.support.action_waits import accepted, finished
from tests.support.markup import attribute, element, elements
from tests.support.peer import Peer
from tests.support.search_reads import add_jobs, stream
from tests.support.servers.live_server import LiveServer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
ACME = {"customer": "acme-42", "plan": "gold"}


async def lines_of(
    client: AsyncClient, params: dict[str, Any] | list[tuple[str, str]]
) -> list[Any]:
    response = await client.get(f"/queues/api/search/?{urlencode(params)}")
    assert response.status_code == 200, response.content[:300] if not response.streaming else ""
    assert response["Content-Type"] == "application/x-ndjson"
    body = b"".join([chunk async for chunk in response.streaming_content])
    return [json.loads(line) for line in body.splitlines() if line]


def matched(lines: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(x["queue"], x["id"], x["state"]) for x in lines if x["type"] == "match"}


async def test_one_search_reads_every_queue_and_streams_its_matches(
    client: AsyncClient, redis_server: RedisServer, peer: Peer
) -> None:
    url = redis_server.url
    mail = await add_jobs(
        url,
        "mail",
        [
            {"name": "welcome", "data": ACME},
            {"name": "welcome", "data": {"customer": "other-7"}},
            {"name": "acme-42-digest", "data": {}},  # the text is in the name
        ],
    )
    billing = await add_jobs(
        url,
        "tenant-a-billing",
        [{"name": "charge", "data": {**ACME, "amount": i}} for i in range(3)]
        + [{"name": "charge", "data": {"customer": "acme-420", "amount": 9}}],
    )
    await add_jobs(url, "tenant-b-billing", [{"name": "charge", "data": {"customer": "x"}}])
    await asyncio.to_thread(peer, "work", "--queue", "tenant-a-billing", "--count", "4", "--fail")

    lines = await lines_of(client, {"q": "acme-42"})
    # Text in data or name, in every queue and state; "acme-420" holds the text too.
    assert matched(lines) == {
        ("mail", mail[0], "waiting"),
        ("mail", mail[2], "waiting"),
        *{("tenant-a-billing", i, "failed") for i in billing},
    }
    first = next(x for x in lines if x["type"] == "match" and x["id"] == mail[0])
    assert set(first) == {"type", "queue", "connection", "id", "name", "state", "match"}
    assert first["connection"] == "default" and first["name"] == "welcome"
    assert first["match"]["in"] == "data" and "acme-42" in first["match"]["text"]
    by_name = next(x for x in lines if x["type"] == "match" and x["id"] == mail[2])
    assert by_name["match"] == {"in": "name", "text": "acme-42-digest"}
    # Matches come queue by queue, each queue's summary after its matches.
    order = [x["queue"] for x in lines if x["type"] in ("match", "queue")]
    assert order == sorted(order)
    summaries = {x["queue"]: x for x in lines if x["type"] == "queue"}
    assert summaries["tenant-a-billing"]["states"] == {"failed": 4}
    assert summaries["mail"]["matched"] == 2 and "tenant-b-billing" not in summaries
    last = lines[-1]
    assert last["type"] == "progress" and last["done"] is True and last["truncated"] is False
    assert (last["queues"], last["queuesTotal"], last["matched"]) == (3, 3, 6)
    assert last["scanned"] == 3 + 4 + 1

    # A JSON field, exactly: "acme-420" is another customer.
    field = await lines_of(client, {"q": "data.customer = acme-42"})
    assert {x[1] for x in matched(field)} == {mail[0], *billing[:3]}
    assert next(x for x in field if x["type"] == "match")["match"]["in"] == "data.customer"
    # States, repeated or as a comma list; queues by name or glob, repeated or with commas.
    assert {
        x[2] for x in matched(await lines_of(client, [("q", "acme"), ("state", "failed")]))
    } == {"failed"}
    both = await lines_of(client, {"q": "acme", "state": "failed,waiting"})
    assert len(matched(both)) == 6
    only = await lines_of(client, [("q", "charge"), ("queues", "tenant-*")])
    assert {x[0] for x in matched(only)} == {"tenant-a-billing", "tenant-b-billing"}
    named = await lines_of(client, {"q": "charge", "queues": "mail, tenant-b-billing"})
    assert {x[0] for x in matched(named)} == {"tenant-b-billing"}
    assert named[-1]["queuesTotal"] == 2
    # A budget shared by the whole search: it stops after that many jobs, and says so.
    cut = await lines_of(client, {"q": "acme", "budget": "5"})
    assert cut[-1]["scanned"] == 5 and cut[-1]["truncated"] is True
    # At most this many matches.
    few = await lines_of(client, {"q": "acme", "max_matches": "2"})
    assert len(matched(few)) == 2 and few[-1]["full"] is True
    # With render=html, rows and groups come as the server's markup.
    html = await lines_of(client, {"q": "data.customer = acme-42", "render": "html"})
    groups = [x for x in html if x["type"] == "match" and "group" in x]
    assert [g["queue"] for g in groups] == ["mail", "tenant-a-billing"]
    assert all(f'href="/queues/q/{x["queue"]}/jobs/{x["id"]}/"' in x["html"] for x in groups)
    assert "Retry" not in next(x for x in html if x["type"] == "queue")["html"]  # no operator
    # Each match says how many its queue has so far; the server words the progress.
    assert [x["queueMatched"] for x in html if x["type"] == "match" and x["queue"] == "mail"] == [1]
    billed = [x["queueMatched"] for x in html if x["type"] == "match" and x["queue"] != "mail"]
    assert billed == [1, 2, 3]
    assert html[-1]["text"] == "queues 3 of 3, 8 jobs read, 4 matches"
    assert "text" not in field[-1]  # the API's own lines carry figures only
    # In the page's language, with the plural its catalog gives: French counts 0 as one.
    french = await stream(
        client,
        f"/queues/api/search/?{urlencode({'q': 'nowhere-to-be-found', 'render': 'html'})}",
        headers={"accept-language": "fr"},
    )
    assert french[-1]["text"] == "files 3 sur 3, 8 tâches lues, 0 résultat"
    capped = await lines_of(client, {"q": "acme", "budget": "5", "render": "html"})
    assert capped[-1]["text"].endswith(
        " (the search stops at this many jobs: narrow it to read the rest)"
    )

    # The results page names the queues whose names hold the text, above the jobs.
    page = (await client.get("/queues/search/?q=billing")).content.decode()
    named = element(page, "p", data_testid="search-named")
    assert [attribute(a, "href") for a in elements(named, "a")] == [
        "/queues/q/tenant-a-billing/",
        "/queues/q/tenant-b-billing/",
    ]

    for bad, message in [
        ({"q": ""}, "Type something to search for"),
        ({"q": "x", "state": "sleeping"}, "state: unknown 'sleeping'"),
        ({"q": "x", "render": "row"}, "render must be 'html' or left out"),
    ]:
        refused = await client.get(f"/queues/api/search/?{urlencode(bad)}")
        assert refused.status_code == 400 and message in refused.json()["error"], bad


async def test_a_search_never_matches_a_masked_value_and_shows_markup_as_text(
    client: AsyncClient, redis_server: RedisServer, bullpen_settings: dict[str, Any]
) -> None:
    [job] = await add_jobs(
        redis_server.url,
        "signup",
        [{"name": "register", "data": {"email": "ann@example.com", "password": "hunter2"}}],
    )
    with override_settings(BULLPEN={**bullpen_settings, "REDACT": ["data.password"]}):
        assert matched(await lines_of(client, {"q": "hunter2"})) == set()
        assert matched(await lines_of(client, {"q": "data.password = hunter2"})) == set()
        found = await lines_of(client, {"q": "ann@example"})
        assert matched(found) == {("signup", job, "waiting")}
        assert "hunter2" not in json.dumps(found)
    assert len(matched(await lines_of(client, {"q": "hunter2"}))) == 1  # unmasked: found

    # Names and data are text in the server's markup, never markup.
    hostile = '"><img src=x onerror=alert(1)>'
    await add_jobs(redis_server.url, hostile, [{"name": hostile, "data": {"x": hostile}}])
    found = await lines_of(client, {"q": "onerror", "render": "html"})
    [line] = [x for x in found if x["type"] == "match"]
    assert "<img" not in line["html"] + line["group"] and "&lt;img" in line["html"]


async def test_two_searches_at_once_per_client(
    client: AsyncClient, redis_server: RedisServer
) -> None:
    await add_jobs(redis_server.url, "q1", [{"name": "n", "data": {"i": i}} for i in range(5)])
    running = [await client.get("/queues/api/search/?q=n") for _ in range(2)]
    assert all(r.status_code == 200 for r in running)
    third = await client.get("/queues/api/search/?q=n")
    assert third.status_code == 429 and third["Retry-After"] == "1"
    assert "At most 2 searches at once" in third.json()["error"]
    # Another client (a signed-in user, counted by name) is not held up by these.
    other = await client.get("/queues/api/search/?q=n", headers=AUTH)
    assert other.status_code == 200
    # A search that ended gives its place back.
    body = b"".join([chunk async for chunk in running[0].streaming_content])
    assert json.loads(body.splitlines()[-1])["done"] is True
    assert (await client.get("/queues/api/search/?q=n")).status_code == 200


def _open_stream(server: LiveServer, query: str) -> socket.socket:
    """A search whose first bytes have come, on a connection of its own."""
    where = urlsplit(server.url)
    sock = socket.create_connection((where.hostname, where.port), timeout=20)
    path = f"/queues/api/search/?{urlencode({'q': query, 'budget': 1_000_000})}"
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {where.netloc}\r\n\r\n".encode())
    head = sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    return sock


async def test_a_search_stops_when_its_client_goes_away(
    bullpen_server: LiveServer, redis_server: RedisServer, redis_client: Any
) -> None:
    for start in range(0, 60_000, 5000):
        await add_jobs(
            redis_server.url,
            "big",
            [{"name": "sync", "data": {"i": i}} for i in range(start, start + 5000)],
        )

    def ranges_read() -> int:
        stats = redis_client.info("commandstats").get("cmdstat_lrange", {})
        return int(stats.get("calls", 0))

    before = ranges_read()
    streams = [_open_stream(bullpen_server, "no such text") for _ in range(2)]
    # Both places of this client are taken while the scans run.
    status = await asyncio.to_thread(_status_of, bullpen_server, "no such text")
    assert status == 429
    for sock in streams:
        sock.close()
    # The scans stop and give their places back: a new search is accepted.
    deadline = time.monotonic() + 10
    while (await asyncio.to_thread(_status_of, bullpen_server, "x")) == 429:
        assert time.monotonic() < deadline, "the cancelled searches kept their places"
        await asyncio.sleep(0.05)
    stopped_at = ranges_read()
    await asyncio.sleep(0.5)
    assert ranges_read() == stopped_at  # nothing reads on after the client left
    # Fewer reads than two whole scans make even at their largest steps (300 each).
    assert stopped_at - before < 2 * 60_000 // Pace.most


def _status_of(server: LiveServer, query: str) -> int:
    where = urlsplit(server.url)
    with socket.create_connection((where.hostname, where.port), timeout=20) as sock:
        path = f"/queues/api/search/?{urlencode({'q': query, 'budget': 1})}"
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {where.netloc}\r\nConnection: close\r\n\r\n".encode()
        )
        head = sock.recv(64)
        while sock.recv(65536):
            pass  # the whole answer: its search ends and gives its place back
    return int(head.split()[1])


async def _states(peer: Peer, queue: str) -> dict[str, set[str]]:
    report = await asyncio.to_thread(peer, "inspect", "--queue", queue)
    return {state: set(ids) for state, ids in report["jobs"].items()}


async def test_retry_promote_and_remove_exactly_the_matches(
    client: AsyncClient, redis_server: RedisServer, peer: Peer
) -> None:
    url = redis_server.url
    failing = await add_jobs(
        url,
        "billing",
        [{"name": "charge", "data": ACME}] * 3
        + [{"name": "charge", "data": {"customer": "b"}}] * 2,
    )
    await asyncio.to_thread(peer, "work", "--queue", "billing", "--count", "5", "--fail")
    done = await add_jobs(url, "billing", [{"name": "charge", "data": ACME}])
    await asyncio.to_thread(peer, "work", "--queue", "billing", "--count", "1")
    acme, others = set(failing[:3]), set(failing[3:])
    before = await _states(peer, "billing")
    assert before["failed"] == acme | others and before["completed"] == set(done)

    path = "/queues/api/queues/billing/search/retry/?" + urlencode({"q": "acme-42"})
    count = (await client.get(path)).json()
    assert count["count"] == 3 and count["states"] == ["failed"]
    assert count["question"] == "Retry 3 matching failed jobs?"
    fragment = (await client.get(path, headers={"HX-Request": "true"})).content.decode()
    assert "Retry 3 matching failed jobs?" in fragment and "hx-post" in fragment

    # The same checks as every action: credentials, then the action, audited.
    assert (await client.post(path)).status_code == 401
    status = await finished(client, accepted(await client.post(path, headers=AUTH)))
    assert (status["action"], status["state"], status["count"]) == ("retry-matches", "done", 3)
    assert status["params"]["query"] == "acme-42" and status["text"] == "3 jobs retried"
    after = await _states(peer, "billing")
    assert after["waiting"] == acme and after["failed"] == others
    assert after["completed"] == set(done)  # completed matches: only when asked for
    entries = [e async for e in AuditEntry.objects.filter(action="retry-matches").order_by("id")]
    assert [(e.detail["phase"], e.detail["query"], e.detail["total"]) for e in entries] == [
        ("started", "acme-42", 3),
        ("done", "acme-42", 3),
    ]
    assert entries[-1].count == 3
    # Nothing left to retry: a conflict, said plainly.
    again = await client.post(path, headers=AUTH)
    assert again.status_code == 409 and "No failed job" in again.json()["error"]

    # Promote: the matching delayed jobs only.
    delayed = await add_jobs(
        url,
        "reminders",
        [
            {"name": "remind", "data": {"customer": c}, "opts": {"delay": 3_600_000}}
            for c in ("acme-42", "acme-42", "zeta")
        ],
    )
    promote = "/queues/api/queues/reminders/search/promote/?" + urlencode(
        {"q": "data.customer = acme-42"}
    )
    assert (await client.get(promote)).json()["question"] == "Promote 2 matching delayed jobs?"
    status = await finished(client, accepted(await client.post(promote, headers=AUTH)))
    assert status["count"] == 2
    states = await _states(peer, "reminders")
    assert states["waiting"] == set(delayed[:2]) and states["delayed"] == {delayed[2]}

    # Remove: the matching jobs of the states named, in one queue only.
    remove = "/queues/api/queues/billing/search/remove/?" + urlencode(
        [("q", "acme-42"), ("state", "waiting"), ("state", "completed")]
    )
    assert (await client.get(remove)).json()["question"] == (
        "Remove 4 matching waiting or completed jobs? This cannot be undone."
    )
    status = await finished(client, accepted(await client.post(remove, headers=AUTH)))
    assert status["count"] == 4
    left = await _states(peer, "billing")
    assert left["waiting"] == set() and left["completed"] == set() and left["failed"] == others
    assert (await _states(peer, "reminders"))["waiting"] == set(delayed[:2])

    # What an action may act on, and unknown actions.
    wrong = await client.get("/queues/api/queues/billing/search/promote/?q=x&state=failed")
    assert (
        wrong.status_code == 400
        and "promote acts only on jobs that are: delayed" in (wrong.json()["error"])
    )
    assert (await client.get("/queues/api/queues/billing/search/clean/?q=x")).status_code == 404
    assert (await client.get("/queues/api/queues/nosuch/search/retry/?q=x")).status_code == 404


async def test_read_only_refuses_actions_on_matches(
    client: AsyncClient, redis_server: RedisServer, bullpen_settings: dict[str, Any]
) -> None:
    await add_jobs(redis_server.url, "ro", [{"name": "n", "data": ACME}])
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        refused = await client.post("/queues/api/queues/ro/search/remove/?q=acme", headers=AUTH)
        assert refused.status_code == 403 and "Read-only" in refused.json()["error"]
    assert await AuditEntry.objects.filter(action="remove-matches", status=403).aexists()
    assert (await client.get("/queues/api/queues/ro/search/remove/?q=acme")).json()["count"] == 1
