"""Deduplication keys through the API: listed a page at a time, released through BullMQ's
removeDeduplicationKey script (Node then accepts a new job with the same id), orphans found
and released; checked in Redis and through Node BullMQ."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import AsyncClient, override_settings
from django.urls import reverse

from dashboard.models import AuditEntry
from tests.support.action_requests import AUTH, node, ok, post
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


def dedup_opts(dedup_id: str, ttl: int | None = None) -> str:
    found: dict[str, Any] = {"id": dedup_id}
    if ttl is not None:
        found["ttl"] = ttl
    return json.dumps({"deduplication": found})


async def add(peer: Peer, queue: str, dedup_id: str, ttl: int | None = None) -> str:
    added = await node(
        peer, "add", "--queue", queue, "--name", "sync", "--opts", dedup_opts(dedup_id, ttl)
    )
    return str(added["id"])


async def keys(client: AsyncClient, queue: str, query: str = "") -> dict[str, Any]:
    response = await client.get(f"/queues/api/queues/{queue}/deduplication/{query}", headers=AUTH)
    assert response.status_code == 200, response.content[:300]
    body: dict[str, Any] = response.json()
    return body


async def test_lists_keys_with_their_job_and_time_left_then_release_lets_node_add_again(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    odd = 'acct <7> & "quotes"/%?'
    held = await add(peer, "sync", odd, ttl=3_600_000)
    forever = await add(peer, "sync", "plain")
    # Node's second add with a held id is deduplicated: it answers the first job.
    assert await add(peer, "sync", odd, ttl=3_600_000) == held

    body = await keys(client, "sync")
    assert body["next"] is None
    listed = {key["id"]: key for key in body["keys"]}
    assert set(listed) == {odd, "plain"}
    assert (listed[odd]["jobId"], listed[odd]["jobState"], listed[odd]["orphan"]) == (
        held,
        "waiting",
        False,
    )
    assert 3_500_000 < listed[odd]["ttl_ms"] <= 3_600_000
    assert (listed["plain"]["jobId"], listed["plain"]["ttl_ms"]) == (forever, None)

    # The queue page's section and the job page show the id escaped, with the time left.
    escaped = "acct &lt;7&gt; &amp; &quot;quotes&quot;/%?"
    section = await client.get("/queues/q/sync/deduplication/", headers=AUTH)
    markup = section.content.decode()
    assert escaped in markup and odd not in markup
    assert markup.count('data-testid="release-dedup"') == 2
    assert 'data-testid="dedup-orphan"' not in markup
    job_page = (await client.get(f"/queues/q/sync/jobs/{held}/", headers=AUTH)).content.decode()
    assert 'data-testid="job-dedup"' in job_page and escaped in job_page
    assert "for another 59 min" in job_page or "for another 1 h 0 min" in job_page
    # The id as the page links it: quoted, its "/" and "%" escaped once more.
    path = reverse("bullpen:release-dedup", args=["sync", odd]).removeprefix("/queues/api/")
    body = await ok(client, path)
    assert (body["action"], body["count"], body["jobIds"], body["deduplicationId"]) == (
        "release-dedup",
        1,
        [held],
        odd,
    )
    assert not redis_client.exists(f"bull:sync:de:{odd}")
    job_page = (await client.get(f"/queues/q/sync/jobs/{held}/", headers=AUTH)).content.decode()
    assert "is free" in job_page and 'data-testid="release-dedup"' not in job_page
    # The key is gone: Node takes a new job under the same id, and the held job stays.
    again = await add(peer, "sync", odd)
    assert again != held
    seen = await node(peer, "job-status", "--queue", "sync", "--id", held)
    assert seen["state"] == "waiting"

    gone = await post(client, "queues/sync/deduplication/nobody/release/")
    assert gone.status_code == 404 and "nobody" in gone.json()["error"]
    audited = [e async for e in AuditEntry.objects.filter(action="release-dedup").order_by("id")]
    assert [(e.status, e.job_ids) for e in audited] == [(200, [held]), (404, [])]


async def test_thousands_of_keys_come_a_bounded_page_at_a_time(
    client: AsyncClient, peer: Peer
) -> None:
    added = await node(
        peer, "add-bulk", "--queue", "many", "--name", "n", "--count", "2500", "--dedup-prefix", "k"
    )
    assert added["added"] == 2500
    seen: set[str] = set()
    pages = 0
    query = "?limit=200"
    while True:
        body = await keys(client, "many", query)
        pages += 1
        # SCAN's COUNT is a hint: a page holds about the limit, never the whole keyspace.
        assert len(body["keys"]) <= 600, len(body["keys"])
        assert all(key["jobState"] == "waiting" and not key["orphan"] for key in body["keys"])
        seen.update(key["id"] for key in body["keys"])
        if body["next"] is None:
            break
        query = f"?limit=200&cursor={body['next']}"
    assert seen == {f"k{i}" for i in range(2500)}
    assert pages >= 5, pages

    # The queue page's section shows a page and a Next button that goes on from its cursor.
    section = (await client.get("/queues/q/many/deduplication/", headers=AUTH)).content.decode()
    assert 'data-testid="dedup-next"' in section
    assert 50 <= section.count("<tr data-dedup-id=") <= 200
    cursor = section.split("deduplication/?cursor=")[1].split('"')[0]
    following = await client.get(f"/queues/q/many/deduplication/?cursor={cursor}", headers=AUTH)
    assert following.status_code == 200 and "First keys" in following.content.decode()

    for query, message in [
        ("?limit=0", "limit"),
        ("?limit=5000", "limit"),
        ("?cursor=abc", "cursor"),
    ]:
        refused = await client.get(f"/queues/api/queues/many/deduplication/{query}", headers=AUTH)
        assert refused.status_code == 400 and message in refused.json()["error"], query


async def test_orphans_are_flagged_and_released_together(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    # A key with a TTL outlives its job: once the job completed, it holds new jobs back for
    # nothing (an orphan), as does a key whose job was removed.
    done = await add(peer, "orph", "done-id", ttl=3_600_000)
    await node(peer, "work", "--queue", "orph", "--count", "1", "--timeout-ms", "10000")
    assert (await node(peer, "job-status", "--queue", "orph", "--id", done))["state"] == (
        "completed"
    )
    live = await add(peer, "orph", "live-id")
    listed = {key["id"]: key for key in (await keys(client, "orph"))["keys"]}
    if "done-id" not in listed:
        pytest.fail(f"BullMQ removed the completed job's key: {listed}")
    assert (listed["done-id"]["jobState"], listed["done-id"]["orphan"]) == ("completed", True)
    assert (listed["live-id"]["jobState"], listed["live-id"]["orphan"]) == ("waiting", False)
    section = (await client.get("/queues/q/orph/deduplication/", headers=AUTH)).content.decode()
    assert section.count('data-testid="dedup-orphan"') == 1
    assert 'data-testid="release-dedup-orphans"' in section
    # Node's add is held back by the orphan.
    assert await add(peer, "orph", "done-id", ttl=3_600_000) == done

    body = await ok(client, "queues/orph/deduplication/release-orphans/")
    assert (body["action"], body["count"], body["released"], body["next"]) == (
        "release-dedup-orphans",
        1,
        ["done-id"],
        None,
    )
    assert not redis_client.exists("bull:orph:de:done-id")
    assert redis_client.get("bull:orph:de:live-id") == live
    assert await add(peer, "orph", "done-id") != done
    entry = await AuditEntry.objects.aget(action="release-dedup-orphans")
    assert entry.status == 200 and entry.job_ids == [done]


async def test_release_is_refused_under_read_only(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    await add(peer, "ro", "x")
    read_only = {**bullpen_settings, "QUEUE_OPTIONS": {"ro": {"read_only": True}}}
    with override_settings(BULLPEN=read_only):
        for path in ("deduplication/x/release/", "deduplication/release-orphans/"):
            refused = await post(client, f"queues/ro/{path}")
            assert refused.status_code == 403, path
    assert redis_client.exists("bull:ro:de:x")


async def test_a_queue_named_with_glob_characters_lists_only_its_own_keys(
    client: AsyncClient, peer: Peer
) -> None:
    mine = await add(peer, "x*", "one")
    await add(peer, "xy", "other")
    body = await keys(client, "x*")
    assert [(key["id"], key["jobId"]) for key in body["keys"]] == [("one", mine)]
