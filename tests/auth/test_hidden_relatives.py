"""Ways a hidden queue's name used to leak past per-queue access (QUEUE_ACCESS): the *Go to*
box sent a job id typed in it to that job's page, whose address names the queue, and a job's
page and API listed its parent and children in hidden queues."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"amy": "amy-pass", "operator": "s3cret-pass"}
# amy sees t1-*, but not the middle of t1-flow's tree, nor t2-*.
RULES = [
    {"QUEUES": ["t1-flow-mid", "t2-*"], "OPERATE": ["user:operator"]},
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["scope:t1", "user:operator"]},
    {"QUEUES": "*", "OPERATE": ["user:operator"]},
]


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


@pytest.fixture
def scoped(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(BASIC_AUTH_PLAIN=USERS, BASIC_AUTH_SCOPES={"amy": ["t1"]}, QUEUE_ACCESS=RULES)
    with override_settings(BULLPEN=config):
        yield


async def test_go_to_a_job_in_a_hidden_queue_goes_where_a_missing_one_does(
    client: AsyncClient, peer: Peer, scoped: None
) -> None:
    peer("add", "--queue", "t2-mail", "--name", "n", "--opts", '{"jobId": "invoice-77"}')
    peer("add", "--queue", "t1-mail", "--name", "n", "--opts", '{"jobId": "order-5"}')
    hidden = await client.get("/queues/go/?q=invoice-77", headers=auth("amy"))
    missing = await client.get("/queues/go/?q=invoice-78", headers=auth("amy"))
    assert hidden.status_code == missing.status_code == 302
    assert hidden["Location"] == missing["Location"].replace("invoice-78", "invoice-77")
    assert "t2-mail" not in hidden["Location"]
    # Her own job, and the operator's view of the hidden one, still go to the job's page.
    own = await client.get("/queues/go/?q=order-5", headers=auth("amy"))
    assert own["Location"] == "/queues/q/t1-mail/jobs/order-5/"
    theirs = await client.get("/queues/go/?q=invoice-77", headers=auth("operator"))
    assert theirs["Location"] == "/queues/q/t2-mail/jobs/invoice-77/"


async def test_a_job_page_keeps_hidden_parents_and_children_unnamed(
    client: AsyncClient, peer: Peer, scoped: None
) -> None:
    flow = peer("flow", "--queue", "t1-flow", "--children", "2", "--grandchildren", "1")
    root, mid, leaf = flow["root"], flow["mid"][0], flow["leaf"][0][0]
    for path in (f"t1-flow/jobs/{root}/", f"t1-flow-leaf/jobs/{leaf}/"):
        page = await client.get(f"/queues/q/{path}", headers=auth("amy"))
        api = await client.get(f"/queues/api/queues/{path}", headers=auth("amy"))
        assert page.status_code == api.status_code == 200, path
        # Neither the hidden queue's name nor its jobs' ids, in the page or the JSON.
        for answer in (page, api):
            assert b"t1-flow-mid" not in answer.content, path
            assert f"/{mid}/".encode() not in answer.content, path
        assert b'data-hidden="true"' in page.content, path
    body = await client.get(f"/queues/api/queues/t1-flow/jobs/{root}/", headers=auth("amy"))
    assert body.json()["children"]["pending"] == [{"hidden": True}] * 2
    body = await client.get(f"/queues/api/queues/t1-flow-leaf/jobs/{leaf}/", headers=auth("amy"))
    job = body.json()
    assert job["parentRef"] == {"hidden": True} and "parentKey" not in job
    # The operator, who may view every queue, sees them named.
    full = await client.get(f"/queues/api/queues/t1-flow/jobs/{root}/", headers=auth("operator"))
    pending = full.json()["children"]["pending"]
    assert {child["queue"] for child in pending} == {"t1-flow-mid"}
    assert json.dumps(full.json()).count("t1-flow-mid") >= 2
