"""``api/audit/``: the audit log as JSON or CSV, with its filters, for operators only, and only
the rows of the queues they may view."""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"amy": "amy-pass-1234", "operator": "s3cret-pass"}


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


async def read(client: AsyncClient, query: str, user: str = "operator") -> Any:
    response = await client.get(f"/queues/api/audit/?{query}", headers=auth(user))
    assert response.status_code == 200
    return response, b"".join([chunk async for chunk in response.streaming_content]).decode()


@pytest.fixture
def entries(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    rules = [
        {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["scope:t1", "user:operator"]},
        {"QUEUES": "*", "OPERATE": ["user:operator"]},
    ]
    config = {**bullpen_settings, "BASIC_AUTH_PLAIN": USERS, "BASIC_AUTH_SCOPES": {"amy": ["t1"]}}
    config["QUEUE_ACCESS"] = rules
    base = {"via": "basic", "remote_addr": "127.0.0.1", "status": 200, "count": 1}
    for queue, action, result in (
        ("t1-mail", "retry", "ok"),
        ("t1-mail", "remove", "refused"),
        ("t2-pay", "retry", "ok"),
    ):
        AuditEntry.objects.create(
            username="operator",
            queue=queue,
            action=action,
            result=result,
            job_ids=["7", "=cmd"],
            error="" if result == "ok" else '=HYPERLINK("x")',
            detail={"q": "name:x AND reason:y"},
            **base,
        )
    with override_settings(BULLPEN=config):
        yield


async def test_json_and_csv_with_filters(client: AsyncClient, entries: None) -> None:
    _, text = await read(client, "")
    rows = json.loads(text)["entries"]
    assert [(r["queue"], r["action"]) for r in rows] == [
        ("t2-pay", "retry"),
        ("t1-mail", "remove"),
        ("t1-mail", "retry"),
    ]
    assert rows[0]["detail"] == {"q": "name:x AND reason:y"} and rows[0]["job_ids"] == ["7", "=cmd"]
    _, text = await read(client, "action=retry&result=ok&queue=t1-mail")
    assert [r["queue"] for r in json.loads(text)["entries"]] == ["t1-mail"]

    response, text = await read(client, "format=csv&result=refused")
    assert 'filename="bullpen-audit.csv"' in response["Content-Disposition"]
    [row] = list(csv.DictReader(io.StringIO(text, newline="")))
    assert (row["queue"], row["action"], row["result"]) == ("t1-mail", "remove", "refused")
    assert row["error"] == '\'=HYPERLINK("x")' and json.loads(row["job_ids"]) == ["7", "=cmd"]


async def test_only_operators_and_only_their_queues(client: AsyncClient, entries: None) -> None:
    _, text = await read(client, "format=csv", user="amy")
    assert {row["queue"] for row in csv.DictReader(io.StringIO(text))} == {"t1-mail"}
    anonymous = await client.get("/queues/api/audit/")
    assert anonymous.status_code == 401
    bad = await client.get("/queues/api/audit/?format=xml", headers=auth("operator"))
    assert bad.status_code == 400 and "format must be" in bad.json()["error"]
