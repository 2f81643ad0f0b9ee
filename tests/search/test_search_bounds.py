"""A search's cost to the server is bounded: one client runs a few searches of a queue at once
(429 beyond them, as for searches over every queue), and an answer streams at most
``SEARCH_STREAM_MAX_BYTES``, ending with an ``error`` line that says so."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import StreamingHttpResponse
from django.test import AsyncClient, override_settings

from dashboard.search import slots
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

SEARCH = "/queues/api/queues/mail/search/?state=waiting&q=payload"


async def body_of(response: StreamingHttpResponse) -> bytes:
    return b"".join([chunk async for chunk in response.streaming_content])  # type: ignore[union-attr]


async def test_one_client_runs_a_few_searches_of_a_queue_at_once(
    client: AsyncClient, peer: Peer
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "n", "--count", "50", "--data", '{"payload": 1}')
    most = slots.MAX_QUEUE_SEARCHES_PER_CLIENT
    # Searches begun and not yet read to their end each hold their place.
    running = [await client.get(SEARCH) for _ in range(most)]
    assert [response.status_code for response in running] == [200] * most
    refused = await client.get(SEARCH)
    assert refused.status_code == 429 and refused["Retry-After"] == "1"
    assert refused.json() == {"error": f"At most {most} searches at once: wait for one to end"}
    # One ends: its place is free again, and the others' answers are whole.
    assert b'"done":true' in (await body_of(running.pop()))
    again = await client.get(SEARCH)
    assert again.status_code == 200
    for response in [*running, again]:
        assert b'"done":true' in await body_of(response)
    assert slots.running("queue|addr:127.0.0.1") == 0


async def test_a_search_answer_ends_at_its_byte_bound_with_an_error_line(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    big = json.dumps({"payload": "x" * 2000})
    peer("add-bulk", "--queue", "mail", "--name", "n", "--count", "40", "--data", big)
    with override_settings(BULLPEN={**bullpen_settings, "SEARCH_STREAM_MAX_BYTES": 6_000}):
        for path in (SEARCH, "/queues/api/search/?q=payload"):
            body = await body_of(await client.get(path))
            lines = [json.loads(line) for line in body.splitlines()]
            *before, last = lines
            assert last["type"] == "error", path
            assert "limit of 6,000 bytes" in last["error"], path
            assert len(body) - len(body.splitlines()[-1]) - 1 <= 6_000, path
            assert sum(line["type"] == "job" or "match" in line for line in before) >= 2, path
        # The bounded searches gave their places back.
        assert slots.running("queue|addr:127.0.0.1") == 0
        assert slots.running("addr:127.0.0.1") == 0
    # Within the bound (the default's 16 MiB), the same search ends as it always did.
    body = await body_of(await client.get(SEARCH))
    assert json.loads(body.splitlines()[-1])["done"] is True
