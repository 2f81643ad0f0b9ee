"""Search on a Postgres queue: the same jobs, added and worked by Node on Redis and on
PostgreSQL, give the same matches for the same queries, in one queue and across queues."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import AsyncClient

from tests.support.action_requests import AUTH
from tests.support.peer import Peer, PostgresPeer
from tests.support.search_reads import stream

pytestmark = pytest.mark.django_db(transaction=True)

CUSTOMERS = ["ada", "bob", "<script>x</script>", "Ada Lovelace"]
QUERIES = [
    ("waiting", "ada"),
    ("waiting", "data.amount > 30"),
    ("waiting", "name:refund OR data.amount <= 10"),
    ("waiting", "data.customer = bob AND NOT name:refund"),
    ("waiting", "<script>"),
    ("waiting", "timestamp > now-1h AND data.missing = 1"),
    ("failed", 'reason:"card declined"'),
    ("failed", "logs:working AND attemptsMade >= 1"),
    ("failed", "NOT reason:timeout"),
    ("completed", "returnvalue.ok = true"),
]


def _same_jobs(add: Any, work: Any) -> None:
    """Failed and completed jobs first (the worker takes what waits), then waiting ones."""
    for n, error in enumerate(["card declined: 1", "gateway timeout", "card declined: 2"]):
        add("charge", {"error": error, "customer": CUSTOMERS[n]}, f"f-{n}")
    work("--count", "3", "--fail", "--progress")
    add("report", {"rows": 5}, "c-0")
    work("--count", "1", "--progress")
    for n in range(8):
        name = "refund" if n % 3 == 0 else "charge"
        add(name, {"amount": n * 10, "customer": CUSTOMERS[n % 4]}, f"o-{n}")


def _on(peer: Peer) -> tuple[Any, Any]:
    def add(name: str, data: dict[str, Any], job_id: str) -> None:
        opts = json.dumps({"jobId": job_id})
        peer("add", "--queue", "orders", "--name", name, "--data", json.dumps(data), "--opts", opts)

    def work(*flags: str) -> None:
        peer("work", "--queue", "orders", *flags)

    return add, work


async def _ids(client: AsyncClient, queue: str, state: str, q: str) -> list[str]:
    path = f"/queues/api/queues/{queue}/search/?{urlencode({'q': q, 'state': state})}"
    lines = await stream(client, path)
    assert lines[-1]["type"] == "progress" and lines[-1]["done"] is True, lines[-1]
    return sorted(line["job"]["id"] for line in lines if line["type"] == "job")


async def test_the_same_jobs_match_the_same_queries_on_both_stores(
    client: AsyncClient, peer: Peer, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    _same_jobs(*_on(peer))
    _same_jobs(*_on(pg_peer))
    found_any = 0
    for state, q in QUERIES:
        on_redis = await _ids(client, "orders@main", state, q)
        on_pg = await _ids(client, "orders@pg", state, q)
        assert on_pg == on_redis, (state, q)
        found_any += bool(on_redis)
    assert found_any >= 8  # the queries match something: the comparison is not of nothing
    assert await _ids(client, "orders@pg", "waiting", "data.customer = bob") == ["o-1", "o-5"]

    # Across queues, both stores' matches come, each under its queue.
    lines = await stream(client, f"/queues/api/search/?{urlencode({'q': 'declined'})}")
    matches = sorted((x["queue"], x["id"]) for x in lines if x["type"] == "match")
    assert matches == [
        ("orders@main", "f-0"),
        ("orders@main", "f-2"),
        ("orders@pg", "f-0"),
        ("orders@pg", "f-2"),
    ]


async def test_a_bad_query_or_state_is_refused_before_reading(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    pg_peer("add", "--queue", "orders", "--name", "n", "--data", "{}")
    bad = await client.get("/queues/api/queues/orders@pg/search/?state=waiting&q=(((")
    assert bad.status_code == 400
    odd = await client.get("/queues/api/queues/orders@pg/search/?state=sideways&q=n")
    assert odd.status_code == 400
    missing = await client.get("/queues/api/queues/nowhere@pg/search/?state=waiting&q=n")
    assert missing.status_code == 404


async def test_acting_on_a_postgres_queues_matches_is_refused_and_changes_nothing(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    pg_peer("add", "--queue", "orders", "--name", "n", "--data", '{"customer": "ada"}')
    refused = await client.post(
        "/queues/api/queues/orders@pg/search/remove/?q=ada&state=waiting", headers=AUTH
    )
    assert refused.status_code == 400 and "PostgreSQL store" in refused.json()["error"]
    assert pg_peer("inspect", "--queue", "orders")["countsAll"]["waiting"] == 1
