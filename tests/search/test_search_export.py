"""Search results taken away: ``format=csv`` on ``api/search/`` and a queue's search, parsed
back with Python's csv module; the same access and redaction rules as the NDJSON answer;
``format=ndjson`` as a file."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import AsyncClient, override_settings

from dashboard.search.export import COLUMNS
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"amy": "amy-pass-1234", "operator": "op-pass-1234"}
RULES = [
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["user:operator"]},
    {"QUEUES": "*", "OPERATE": ["user:operator"]},
]


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


async def body(client: AsyncClient, url: str, headers: dict[str, str] | None = None) -> Any:
    response = await client.get(url, headers=headers or {})
    assert response.status_code == 200
    return response, b"".join([chunk async for chunk in response.streaming_content])


def table(raw: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(raw.decode(), newline="")))


def add(peer: Peer, queue: str, name: str, data: dict[str, Any]) -> str:
    return str(peer("add", "--queue", queue, "--name", name, "--data", json.dumps(data))["id"])


@pytest.fixture
def scoped(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(
        BASIC_AUTH_PLAIN=USERS,
        BASIC_AUTH_SCOPES={"amy": ["t1"]},
        QUEUE_ACCESS=RULES,
        REDACT=["data.card"],
    )
    with override_settings(BULLPEN=config):
        yield


async def test_csv_of_every_queue_parses_back(client: AsyncClient, peer: Peer) -> None:
    hostile = '=HYPERLINK("http://x"),"quoted"\nline two'
    one = add(peer, "exp-mail", "welcome", {"user": {"id": 7}, "plan": "gold", "note": hostile})
    two = add(peer, "exp-billing", "charge", {"user": {"id": 8}, "plan": "gold", "tags": ["a"]})
    add(peer, "exp-billing", "charge", {"plan": "free"})
    peer("work", "--queue", "exp-billing", "--count", "2", "--fail")
    query = urlencode(
        {"q": "data.plan = gold", "format": "csv", "columns": "data.user.id,data.note"}
    )
    response, raw = await body(client, f"/queues/api/search/?{query}")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="bullpen-search.csv"' in response["Content-Disposition"]
    rows = table(raw)
    assert list(rows[0]) == [*COLUMNS, "data.user.id", "data.note"]
    by_id = {(row["queue"], row["id"]): row for row in rows}
    assert set(by_id) == {("exp-mail", one), ("exp-billing", two)}
    mail, billing = by_id["exp-mail", one], by_id["exp-billing", two]
    assert (mail["name"], mail["state"], mail["data.user.id"]) == ("welcome", "waiting", "7")
    # A formula is text in a spreadsheet; quotes and line breaks survive the round trip.
    assert mail["data.note"] == "'" + hostile
    assert mail["finishedOn"] == "" and int(mail["timestamp"]) > 0
    assert (billing["state"], billing["attemptsMade"]) == ("failed", "1")
    assert billing["failedReason"] == f"job {two} failed on purpose"
    assert int(billing["finishedOn"]) >= int(billing["processedOn"]) > 0


async def test_csv_and_ndjson_of_one_queue(client: AsyncClient, peer: Peer) -> None:
    ids = [add(peer, "exp-one", "n", {"i": i, "even": i % 2 == 0}) for i in range(5)]
    query = urlencode(
        {"q": "data.even = true", "state": "waiting", "format": "csv", "columns": "data.i"}
    )
    _, raw = await body(client, f"/queues/api/queues/exp-one/search/?{query}")
    rows = table(raw)
    assert sorted((row["id"], row["data.i"]) for row in rows) == [
        (ids[i], str(i)) for i in (0, 2, 4)
    ]
    # A budget that ends the scan early says so in a last row.
    _, raw = await body(client, f"/queues/api/queues/exp-one/search/?{query}&budget=2")
    assert list(csv.reader(io.StringIO(raw.decode())))[-1] == ["#truncated", "2"]
    query = urlencode({"q": "data.i >= 3", "state": "waiting", "format": "ndjson"})
    response, raw = await body(client, f"/queues/api/queues/exp-one/search/?{query}")
    assert 'filename="bullpen-search.ndjson"' in response["Content-Disposition"]
    lines = [json.loads(line) for line in raw.splitlines()]
    assert sorted(x["job"]["id"] for x in lines if x["type"] == "job") == [ids[3], ids[4]]


async def test_csv_keeps_access_and_redaction(
    client: AsyncClient, peer: Peer, scoped: None
) -> None:
    mine = add(peer, "t1-pay", "charge", {"card": "4242-4242", "who": "amy-customer"})
    add(peer, "t2-pay", "charge", {"card": "5555-5555", "who": "other-customer"})
    query = urlencode({"q": "customer", "format": "csv", "columns": "data.card,data.who"})
    _, raw = await body(client, f"/queues/api/search/?{query}", auth("amy"))
    rows = table(raw)
    assert [(row["queue"], row["id"]) for row in rows] == [("t1-pay", mine)]
    assert b"4242" not in raw and b"t2-pay" not in raw and rows[0]["data.card"] != ""
    _, raw = await body(client, f"/queues/api/search/?{query}", auth("operator"))
    assert {row["queue"] for row in table(raw)} == {"t1-pay", "t2-pay"}
    assert b"4242" not in raw and b"5555" not in raw
    # A masked value is never matched either.
    _, raw = await body(
        client, f"/queues/api/search/?{urlencode({'q': '4242', 'format': 'csv'})}", auth("operator")
    )
    assert table(raw) == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"format": "xml"}, "format must be 'csv', 'ndjson' or left out"),
        ({"format": "csv", "columns": "opts.attempts"}, "is not a data.<path> column"),
        ({"format": "csv", "columns": ",".join(f"data.c{i}" for i in range(21))}, "at most 20"),
    ],
)
async def test_bad_export_parameters(
    client: AsyncClient, params: dict[str, str], message: str
) -> None:
    refused = await client.get(f"/queues/api/search/?{urlencode({'q': 'x', **params})}")
    assert refused.status_code == 400 and message in refused.json()["error"]
