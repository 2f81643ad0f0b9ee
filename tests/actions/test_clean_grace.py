"""Clean takes its grace period as a person types it; grace_ms still works for API clients."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from django.test import AsyncClient

from tests.support.action_requests import AUTH, post
from tests.support.action_waits import accepted, finished
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

MINUTE_MS = 60_000


async def add_aged(peer: Peer, queue: str, name: str, age_ms: int) -> str:
    """A waiting job whose creation time (what clean compares) is ``age_ms`` ago."""
    opts = json.dumps({"timestamp": int(time.time() * 1000) - age_ms})
    added = await asyncio.to_thread(
        peer, "add", "--queue", queue, "--name", name, "--data", "{}", "--opts", opts
    )
    return str(added["id"])


async def waiting_as_node_sees_it(peer: Peer, queue: str) -> set[str]:
    inspected = await asyncio.to_thread(peer, "inspect", "--queue", queue)
    return set(inspected["jobs"]["waiting"])


async def cleaned(client: AsyncClient, path: str, data: Any = None) -> dict[str, Any]:
    """Clean runs as a bulk action: its status once done."""
    status = await finished(client, accepted(await post(client, path, data)))
    assert status["state"] == "done"
    return status


async def test_grace_in_human_units(client: AsyncClient, peer: Peer) -> None:
    ages = {"old-1": 120, "old-2": 120, "mid": 45, "recent": 10, "fresh": 0}
    ids = {
        name: await add_aged(peer, "tidy", name, minutes * MINUTE_MS)
        for name, minutes in ages.items()
    }
    body = await cleaned(client, "queues/tidy/clean/", {"state": "waiting", "grace": "30 min"})
    assert body["count"] == 3 and body["params"]["grace_ms"] == 30 * MINUTE_MS
    assert set(body["jobIds"]) == {ids["old-1"], ids["old-2"], ids["mid"]}
    assert await waiting_as_node_sees_it(peer, "tidy") == {ids["recent"], ids["fresh"]}

    # grace_ms, as API clients send it, keeps working.
    body = await cleaned(client, "queues/tidy/clean/?state=waiting&grace_ms=300000")
    assert body["jobIds"] == [ids["recent"]]
    assert await waiting_as_node_sees_it(peer, "tidy") == {ids["fresh"]}


async def test_default_grace_is_one_hour(client: AsyncClient, peer: Peer) -> None:
    old = await add_aged(peer, "tidy", "old", 90 * MINUTE_MS)
    young = await add_aged(peer, "tidy", "young", 50 * MINUTE_MS)
    body = await cleaned(client, "queues/tidy/clean/", {"state": "waiting"})
    assert body["jobIds"] == [old] and body["params"]["grace_ms"] == 60 * MINUTE_MS
    assert await waiting_as_node_sees_it(peer, "tidy") == {young}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"grace": "soon"}, "grace: 'soon' is not a duration such as 1 h, 30 min"),
        ({"grace": "3 fortnights"}, "grace: unknown unit 'fortnights'"),
        ({"grace": "1 h", "grace_ms": "5"}, "Give grace or grace_ms, not both"),
        ({"grace_ms": "1 h"}, "grace_ms must be a whole number"),
    ],
)
async def test_bad_grace_is_a_400_that_names_the_units(
    client: AsyncClient, peer: Peer, data: dict[str, str], message: str
) -> None:
    kept = await add_aged(peer, "tidy", "old", 120 * MINUTE_MS)
    response = await client.post(
        "/queues/api/queues/tidy/clean/", {"state": "waiting", **data}, headers=AUTH
    )
    assert response.status_code == 400
    error: Any = response.json()["error"]
    assert message in error
    if "grace:" in message:
        assert "units: ms, s, min, h, d, w" in error
    assert await waiting_as_node_sees_it(peer, "tidy") == {kept}
