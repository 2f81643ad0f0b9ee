"""``api/saved-searches/``: saving (audited, refused under read-only mode, the query checked),
listing with owners and links that run the search, deleting one's own, and, under
QUEUE_ACCESS, each user seeing only their own."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.peer import Peer
from tests.support.search_reads import stream

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"operator": "s3cret-pass", "amy": "amy-pass-1234"}
RULES = [
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["scope:t1", "user:operator"]},
    {"QUEUES": "*", "OPERATE": ["user:operator"]},
]


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


async def save(client: AsyncClient, body: dict[str, Any], user: str = "operator") -> Any:
    return await client.post(
        "/queues/api/saved-searches/",
        json.dumps(body),
        content_type="application/json",
        headers=auth(user),
    )


async def test_save_list_run_and_delete(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    job = peer("add", "--queue", "t1-mail", "--name", "welcome", "--data", '{"plan": "gold"}')["id"]
    peer("add", "--queue", "t1-mail", "--name", "welcome", "--data", '{"plan": "free"}')
    body = {
        "name": "Gold welcomes",
        "q": "name:welcome AND data.plan = gold",
        "state": ["waiting"],
        "queues": ["t1-*"],
    }
    saved = await save(client, body)
    assert saved.status_code == 200, saved.content
    answer = saved.json()
    url = answer["url"]
    assert url.startswith("/queues/search/?")
    assert parse_qs(urlsplit(url).query) == {
        "q": [body["q"]],
        "state": ["waiting"],
        "queues": ["t1-*"],
    }
    listed = (await client.get("/queues/api/saved-searches/", headers=auth("operator"))).json()
    assert listed == {"searches": [{"id": answer["id"], "owner": "operator", "url": url, **body}]}
    # The link runs the search; the API with the same parameters finds the job.
    page = await client.get(url, headers=auth("operator"))
    assert page.status_code == 200 and "name:welcome AND data.plan = gold" in page.content.decode()
    lines = await stream(client, url.replace("/queues/search/", "/queues/api/search/"))
    assert [x["id"] for x in lines if x["type"] == "match"] == [str(job)]
    row = await AuditEntry.objects.aget(action="save-search")
    assert row.username == "operator" and row.detail["id"] == answer["id"]

    gone = await client.post(
        f"/queues/api/saved-searches/{answer['id']}/delete/", headers=auth("operator")
    )
    assert gone.status_code == 200
    listed = (await client.get("/queues/api/saved-searches/", headers=auth("operator"))).json()
    assert listed == {"searches": []}
    assert await AuditEntry.objects.filter(action="delete-saved-search").acount() == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "x", "q": "(name:a"}, "expected ')' at character 8"),
        ({"name": "", "q": "a"}, "name is required"),
        ({"name": "x", "q": "a", "state": ["sleeping"]}, "unknown 'sleeping'"),
        ({"name": "x" * 101, "q": "a"}, "name"),
    ],
)
async def test_bad_input_is_refused_and_nothing_saved(
    client: AsyncClient, bullpen_settings: dict[str, Any], body: dict[str, Any], message: str
) -> None:
    refused = await save(client, body)
    assert refused.status_code == 400 and message in refused.json()["error"]
    listed = (await client.get("/queues/api/saved-searches/")).json()
    assert listed == {"searches": []}


async def test_read_only_refuses_saving(
    client: AsyncClient, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        refused = await save(client, {"name": "x", "q": "a"})
    assert refused.status_code == 403
    assert (await client.get("/queues/api/saved-searches/")).json() == {"searches": []}
    assert await AuditEntry.objects.filter(action="save-search", result="refused").acount() == 1
    anonymous = await client.post(
        "/queues/api/saved-searches/",
        json.dumps({"name": "x", "q": "a"}),
        content_type="application/json",
    )
    assert anonymous.status_code == 401


async def test_restricted_users_see_and_delete_only_their_own(
    client: AsyncClient, bullpen_settings: dict[str, Any]
) -> None:
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(BASIC_AUTH_PLAIN=USERS, BASIC_AUTH_SCOPES={"amy": ["t1"]}, QUEUE_ACCESS=RULES)
    with override_settings(BULLPEN=config):
        theirs = (
            await save(client, {"name": "t2 failures", "q": "reason:x", "queues": ["t2-secret"]})
        ).json()
        mine = (await save(client, {"name": "mine", "q": "name:x"}, user="amy")).json()
        seen = (await client.get("/queues/api/saved-searches/", headers=auth("amy"))).json()
        assert [s["name"] for s in seen["searches"]] == ["mine"]
        everyone = (
            await client.get("/queues/api/saved-searches/", headers=auth("operator"))
        ).json()
        # Under QUEUE_ACCESS each sees their own (a superuser, all).
        assert {s["name"] for s in everyone["searches"]} == {"t2 failures"}
        refused = await client.post(
            f"/queues/api/saved-searches/{theirs['id']}/delete/", headers=auth("amy")
        )
        assert refused.status_code == 404
        assert (
            await client.post(
                f"/queues/api/saved-searches/{mine['id']}/delete/", headers=auth("amy")
            )
        ).status_code == 200
        everyone = (
            await client.get("/queues/api/saved-searches/", headers=auth("operator"))
        ).json()
        assert [s["name"] for s in everyone["searches"]] == ["t2 failures"]
