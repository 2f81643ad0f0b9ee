"""Job data given as text is JSON text, for adding a job and for editing one: a bare word is a
400 that says so, whichever word it is, and a quoted string is stored as a string."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.test import AsyncClient

from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
NOT_JSON = 'data is not valid JSON (text needs quotes, as in "hello")'


@pytest.fixture
def job_id(peer: Peer) -> str:
    added: dict[str, Any] = peer("add", "--queue", "edit", "--name", "n", "--data", '{"a": 1}')
    return str(added["id"])


# "hello" was once stored as a string while "nancy" (it starts like JSON's "null") was refused.
@pytest.mark.parametrize("word", ["hello", "nancy", "true-ish", "{not json"])
async def test_a_bare_word_is_refused_when_adding(
    client: AsyncClient, job_id: str, redis_client: Any, word: str
) -> None:
    response = await client.post(
        "/queues/api/queues/edit/add/", {"name": "x", "data": word}, headers=AUTH
    )
    assert response.status_code == 400
    assert response.json() == {"error": NOT_JSON}
    assert redis_client.llen("bull:edit:wait") == 1  # only the fixture's job


@pytest.mark.parametrize("word", ["hello", "nancy"])
async def test_a_bare_word_is_refused_when_editing(
    client: AsyncClient, job_id: str, redis_client: Any, word: str
) -> None:
    response = await client.post(
        f"/queues/api/queues/edit/jobs/{job_id}/data/", {"data": word}, headers=AUTH
    )
    assert response.status_code == 400
    assert response.json() == {"error": NOT_JSON}
    assert json.loads(redis_client.hget(f"bull:edit:{job_id}", "data")) == {"a": 1}


async def test_quoted_text_is_stored_as_a_string(
    client: AsyncClient, job_id: str, redis_client: Any
) -> None:
    added = await client.post(
        "/queues/api/queues/edit/add/", {"name": "x", "data": '"hello"'}, headers=AUTH
    )
    assert added.status_code == 200, added.content
    new_id = added.json()["jobIds"][0]
    assert json.loads(redis_client.hget(f"bull:edit:{new_id}", "data")) == "hello"
    edited = await client.post(
        f"/queues/api/queues/edit/jobs/{job_id}/data/", {"data": '"nancy"'}, headers=AUTH
    )
    assert edited.status_code == 200, edited.content
    assert json.loads(redis_client.hget(f"bull:edit:{job_id}", "data")) == "nancy"


async def test_a_json_body_gives_data_as_a_value(
    client: AsyncClient, job_id: str, redis_client: Any
) -> None:
    response = await client.post(
        f"/queues/api/queues/edit/jobs/{job_id}/data/",
        {"data": {"b": [1, 2]}},
        content_type="application/json",
        headers=AUTH,
    )
    assert response.status_code == 200, response.content
    assert json.loads(redis_client.hget(f"bull:edit:{job_id}", "data")) == {"b": [1, 2]}
    missing = await client.post(f"/queues/api/queues/edit/jobs/{job_id}/data/", {}, headers=AUTH)
    assert missing.status_code == 400
    assert missing.json() == {"error": "data is required (the new job data, as JSON)"}
