"""Dead-letter replay acts on the original's queue, so it answers to that queue's access: a
dead letter crafted by someone who may operate the dead-letter queue (it is a queue like any
other: *Add a job* writes one) replays nowhere its author may not act, and says no more than
a queue that does not exist would."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"amy": "amy-pass", "operator": "s3cret-pass"}
OPS = "user:operator"
# amy (tenant t1) operates the dead-letter queue and t1-mail, only views t1-sms, and does not
# see t2-mail at all.
RULES = [
    {
        "QUEUES": ["dead-letter", "t1-mail", "t1-ro"],
        "VIEW": ["scope:t1"],
        "OPERATE": ["scope:t1", OPS],
    },
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": [OPS]},
    {"QUEUES": "*", "OPERATE": [OPS]},
]
DEAD = "/queues/api/queues/dead-letter"


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


@pytest.fixture
def tenants(bullpen_settings: dict[str, Any]) -> Iterator[dict[str, Any]]:
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(
        BASIC_AUTH_PLAIN=USERS,
        BASIC_AUTH_SCOPES={"amy": ["t1"]},
        QUEUE_ACCESS=RULES,
        QUEUE_OPTIONS={"t1-ro": {"read_only": True}},
    )
    with override_settings(BULLPEN=config):
        yield config


async def craft(client: AsyncClient, target: dict[str, Any]) -> str:
    """A dead letter written through the dashboard's *Add a job* by amy, who may."""
    envelope = {"jobId": "crafted-1", "name": "evil", "data": {"pwned": True}, **target}
    added = await client.post(
        f"{DEAD}/add/", {"name": "evil", "data": json.dumps(envelope)}, headers=auth("amy")
    )
    assert added.status_code == 200, added.content
    return str(added.json()["jobIds"][0])


def job_ids(peer: Peer, queue: str, prefix: str = "bull") -> list[str]:
    jobs = peer("inspect", "--queue", queue, "--prefix", prefix)["jobs"]
    return sorted(job_id for ids in jobs.values() for job_id in ids)


async def test_a_crafted_dead_letter_replays_nowhere_its_author_may_not_act(
    client: AsyncClient, peer: Peer, tenants: dict[str, Any]
) -> None:
    for queue in ("dead-letter", "t1-mail", "t1-sms", "t1-ro", "t2-mail"):
        peer("add", "--queue", queue, "--name", "seed")
    before = {
        target: job_ids(peer, target.rpartition(":")[2], target.rpartition(":")[0] or "bull")
        for target in ("t2-mail", "t1-sms", "t1-ro", "elsewhere:t1-mail", "bullpen:t1-mail")
    }
    refusals = [
        ({"queue": "t2-mail"}, "t2-mail"),  # hidden from amy
        ({"queue": "t1-sms"}, "t1-sms"),  # amy may only view it
        ({"queue": "t1-ro"}, "t1-ro"),  # read-only
        ({"queue": "t1-mail", "prefix": "elsewhere"}, "elsewhere:t1-mail"),  # not configured
        ({"queue": "t1-mail", "prefix": "bullpen"}, "bullpen:t1-mail"),  # Bullpen's own keys
        ({"queue": "t1-mail:x", "prefix": "bull"}, "t1-mail:x"),  # a name BullMQ refuses
    ]
    for target, slug in refusals:
        letter = await craft(client, target)
        replayed = await client.post(f"{DEAD}/jobs/{letter}/replay/", headers=auth("amy"))
        assert replayed.status_code == 404, (slug, replayed.content)
        assert replayed.json() == {"error": f"Unknown queue {slug!r}"}
        # Nothing changed: the dead letter is still there, the target has what it had.
        assert letter in job_ids(peer, "dead-letter")
    for target, ids in before.items():
        prefix, _, queue = target.rpartition(":")
        assert job_ids(peer, queue, prefix or "bull") == ids, target
    # Each refusal is audited under the queue it aimed at, as a refused look at it.
    rows = [
        (row.action, row.queue, row.status, row.result)
        async for row in AuditEntry.objects.filter(action="replay").order_by("id")
    ]
    assert rows == [("replay", slug, 404, "refused") for _, slug in refusals]

    # Where amy may act, her dead letter replays, audited under the queue it went to.
    letter = await craft(client, {"queue": "t1-mail"})
    replayed = await client.post(f"{DEAD}/jobs/{letter}/replay/", headers=auth("amy"))
    assert replayed.status_code == 200, replayed.content
    assert "crafted-1" in job_ids(peer, "t1-mail")
    assert letter not in job_ids(peer, "dead-letter")
    last = await AuditEntry.objects.filter(action="replay").order_by("-id").afirst()
    assert last is not None and (last.queue, last.result) == ("t1-mail", "ok")
    # The operator, who may act everywhere, still may not replay outside configured prefixes.
    letter = await craft(client, {"queue": "t1-mail", "prefix": "bullpen"})
    replayed = await client.post(f"{DEAD}/jobs/{letter}/replay/", headers=auth("operator"))
    assert replayed.json() == {"error": "Unknown queue 'bullpen:t1-mail'"}
