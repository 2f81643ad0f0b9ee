"""The query language against jobs Node BullMQ wrote and ran, over several queues: the exact
jobs boolean, comparison, time-range and log queries match, through ``api/search/`` and a
queue's search, and the 400 a query that cannot be read gets."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import AsyncClient

from tests.support.peer import Peer
from tests.support.search_reads import stream
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

HOUR = 3_600_000


def add(peer: Peer, queue: str, name: str, data: dict[str, Any], **opts: Any) -> str:
    found = peer(
        "add",
        "--queue",
        queue,
        "--name",
        name,
        "--data",
        json.dumps(data),
        "--opts",
        json.dumps(opts),
    )
    return str(found["id"])


@pytest.fixture
def jobs(redis_server: RedisServer, peer: Peer) -> dict[str, tuple[str, str]]:
    """Jobs in three queues, by a short name: (queue, id)."""
    now = int(time.time() * 1000)
    made = {
        "gold-old": (
            "lang-mail",
            add(
                peer,
                "lang-mail",
                "welcome",
                {"plan": "gold", "amount": 120},
                timestamp=now - 3 * HOUR,
            ),
        ),
        "free-new": (
            "lang-mail",
            add(
                peer,
                "lang-mail",
                "welcome",
                {"plan": "free", "amount": 0},
                timestamp=now - 10 * 60_000,
            ),
        ),
        "digest": (
            "lang-mail",
            add(
                peer,
                "lang-mail",
                "digest",
                {"plan": "gold", "amount": 30},
                timestamp=now - 48 * HOUR,
            ),
        ),
        "declined": (
            "lang-billing",
            add(peer, "lang-billing", "charge", {"error": "card declined"}),
        ),
        "timeout": (
            "lang-billing",
            add(peer, "lang-billing", "charge", {"error": "gateway timeout"}),
        ),
        "report": ("lang-reports", add(peer, "lang-reports", "report", {"rows": 5})),
    }
    peer("work", "--queue", "lang-billing", "--count", "2", "--fail", "--progress")
    peer("work", "--queue", "lang-reports", "--count", "1", "--progress")
    return made


async def found(client: AsyncClient, q: str, **more: str) -> set[tuple[str, str]]:
    lines = await stream(client, f"/queues/api/search/?{urlencode({'q': q, **more})}")
    assert lines[-1]["type"] == "progress" and lines[-1]["done"], lines[-1]
    return {(x["queue"], x["id"]) for x in lines if x["type"] == "match"}


@pytest.mark.parametrize(
    ("q", "names"),
    [
        ("name:welcome AND data.plan = gold", {"gold-old"}),
        ("name:welcome data.plan = gold", {"gold-old"}),
        ("name:digest OR data.amount > 100", {"gold-old", "digest"}),
        ("data.plan = gold AND NOT (name:digest OR data.amount < 50)", {"gold-old"}),
        ("data.amount >= 0 data.amount <= 30", {"free-new", "digest"}),
        ("timestamp > now-1h AND name:welcome", {"free-new"}),
        ("timestamp < now-1d", {"digest"}),
        ("timestamp > now-4h AND timestamp < now-1h", {"gold-old"}),
        ('reason:"card declined" OR reason:timeout', {"declined", "timeout"}),
        ("attemptsMade >= 1 AND NOT returnvalue.ok = true", {"declined", "timeout"}),
        ("returnvalue.ok = true", {"report"}),
        ("logs:finished", {"report"}),
        ("logs:working AND name:charge", {"declined", "timeout"}),
        ("finishedOn > now-1h", {"declined", "timeout", "report"}),
        ("processedOn > now-1h AND NOT name:charge", {"report"}),
    ],
)
async def test_exact_matches_over_several_queues(
    client: AsyncClient, jobs: dict[str, tuple[str, str]], q: str, names: set[str]
) -> None:
    assert await found(client, q) == {jobs[name] for name in names}


async def test_one_queue_and_a_one_clause_query_of_old(
    client: AsyncClient, jobs: dict[str, tuple[str, str]]
) -> None:
    # Bare words stay one phrase: "gateway timeout" is in one job, both words in none other.
    assert await found(client, "gateway timeout") == {jobs["timeout"]}
    assert await found(client, "timeout gateway") == set()
    assert await found(client, "timeout AND gateway") == {jobs["timeout"]}
    query = urlencode({"q": "name:charge AND reason:declined", "state": "failed"})
    lines = await stream(client, f"/queues/api/queues/lang-billing/search/?{query}")
    assert [x["job"]["id"] for x in lines if x["type"] == "job"] == [jobs["declined"][1]]


@pytest.mark.parametrize(
    ("url", "q", "position", "expected"),
    [
        ("/queues/api/search/", "(name:a OR b", 13, "')'"),
        ("/queues/api/search/", "timestamp > yesterday", 13, "now, now-<N>s|m|h|d or an ISO date"),
        ("/queues/api/queues/lang-mail/search/", "name:a AND", 11, "a term, NOT or '('"),
        ("/queues/api/queues/lang-mail/search/retry/", "x)", 2, "AND, OR or the end of the query"),
    ],
)
async def test_a_query_that_cannot_be_read_is_a_400_saying_where(
    client: AsyncClient,
    jobs: dict[str, tuple[str, str]],
    url: str,
    q: str,
    position: int,
    expected: str,
) -> None:
    response = await client.get(f"{url}?{urlencode({'q': q})}")
    assert response.status_code == 400
    body = json.loads(response.content)
    assert (body["position"], body["expected"]) == (position, expected)
    assert f"expected {expected} at character {position}" in body["error"]


async def test_no_query_reads_more_than_the_budget(
    client: AsyncClient, jobs: dict[str, tuple[str, str]]
) -> None:
    q = "(a OR b OR c) AND NOT (d OR e) AND data.amount > 1 AND logs:x"
    lines = await stream(client, f"/queues/api/search/?{urlencode({'q': q, 'budget': 2})}")
    assert lines[-1]["scanned"] <= 2 and lines[-1]["truncated"] is True


async def test_logs_are_read_in_part(
    client: AsyncClient, redis_server: RedisServer, peer: Peer
) -> None:
    early = add(peer, "lang-logs", "n", {})
    late = add(peer, "lang-logs", "n", {})
    old = add(peer, "lang-logs", "n", {})
    with redis_server.client() as redis:
        redis.rpush(f"bull:lang-logs:{early}:logs", "needle " + "x" * 1_000_000)
        # Past the part of a line a search reads, and before the newest 50 lines.
        redis.rpush(f"bull:lang-logs:{late}:logs", "x" * 3000 + " needle")
        redis.rpush(f"bull:lang-logs:{old}:logs", "needle", *[f"line {i}" for i in range(50)])
    assert await found(client, "logs:needle") == {("lang-logs", early)}
    assert await found(client, 'logs:"line 49"') == {("lang-logs", old)}


async def test_acting_on_matches_counts_with_the_language(
    client: AsyncClient, jobs: dict[str, tuple[str, str]]
) -> None:
    for q, count in (
        ('reason:"card declined" OR reason:timeout', 2),
        ("reason:declined AND finishedOn > now-1h", 1),
        ("NOT reason:declined AND attemptsMade >= 1", 1),
        ("timestamp < now-1h", 0),
    ):
        query = urlencode({"q": q, "state": "failed"})
        answer = await client.get(f"/queues/api/queues/lang-billing/search/retry/?{query}")
        assert answer.status_code == 200, answer.content
        assert (answer.json()["count"], answer.json()["query"]) == (count, q)
