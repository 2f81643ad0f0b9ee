"""``api/schedulers/`` and ``schedulers/``: job schedulers made by Node BullMQ across queues, one
overdue on purpose (no worker takes its job), read in two round trips per connection, shown to
those who may view each queue, with actions only where they may act."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from queues.reads.discovery import discovered
from queues.redis import fastpipe
from queues.schedulers.everywhere import all_schedulers
from tests.support.action_requests import AUTH, node
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

HOUR = 3_600_000


async def seed(peer: Peer) -> None:
    """``mail/digest`` overdue (its first job made at once, and no worker), ``reports/nightly``
    on a pattern (its next run tomorrow), ``billing/hourly`` whose first job a worker did."""
    await node(peer, "upsert-scheduler", "--queue", "mail", "--id", "digest", "--every", "60000")
    await node(
        peer,
        "upsert-scheduler",
        "--queue",
        "reports",
        "--id",
        "nightly",
        "--pattern",
        "0 3 * * *",
        "--tz",
        "Europe/Paris",
    )
    await node(
        peer, "upsert-scheduler", "--queue", "billing", "--id", "hourly", "--every", str(HOUR)
    )
    await node(peer, "work", "--queue", "billing", "--count", "1")
    await node(peer, "add", "--queue", "plain", "--name", "no-scheduler")


async def schedulers(client: AsyncClient, query: str = "") -> list[dict[str, Any]]:
    response = await client.get(f"/queues/api/schedulers/{query}", headers=AUTH)
    assert response.status_code == 200, response.content[:300]
    rows: list[dict[str, Any]] = response.json()["schedulers"]
    return rows


async def test_every_queues_schedulers_overdue_first_with_their_jobs(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await seed(peer)
    rows = await schedulers(client)
    assert [(row["queue"], row["id"]) for row in rows] == [
        ("mail", "digest"),
        *sorted(
            [("reports", "nightly"), ("billing", "hourly")],
            key=lambda pair: next(r["next"] for r in rows if r["id"] == pair[1]),
        ),
    ]
    by_id = {row["id"]: row for row in rows}
    now = int(time.time() * 1000)

    digest = by_id["digest"]
    assert digest["overdue"] is True and digest["every"] == 60000 and digest["pattern"] is None
    assert digest["next"] <= now and digest["connection"] == "default"
    assert digest["nextJob"] == f"repeat:digest:{digest['next']}"
    assert digest["nextJobState"] == "waiting"
    assert redis_client.lpos("bull:mail:wait", digest["nextJob"]) is not None
    assert (digest["lastRun"], digest["lastJobs"]) == (None, [])

    nightly = by_id["nightly"]
    assert (nightly["pattern"], nightly["tz"], nightly["every"]) == (
        "0 3 * * *",
        "Europe/Paris",
        None,
    )
    assert nightly["overdue"] is False and nightly["next"] > now
    assert nightly["nextJobState"] == "delayed"

    # The worker took the first job: BullMQ moved the next run on an hour, and the job it
    # made is among the last jobs, named as BullMQ names them.
    hourly = by_id["hourly"]
    assert hourly["overdue"] is False and hourly["next"] > now
    (done,) = hourly["lastJobs"]
    assert done["state"] == "completed" and done["id"].startswith("repeat:hourly:")
    assert done["finishedOn"] == int(redis_client.hget(f"bull:billing:{done['id']}", "finishedOn"))
    assert hourly["lastRun"] == int(done["id"].rpartition(":")[2])
    assert hourly["nextJob"] == f"repeat:hourly:{hourly['next']}"

    assert [row["id"] for row in await schedulers(client, "?order=-next")] == [
        row["id"] for row in sorted(rows, key=lambda row: -row["next"])
    ]
    assert [row["queue"] for row in await schedulers(client, "?order=queue")] == [
        "billing",
        "mail",
        "reports",
    ]
    refused = await client.get("/queues/api/schedulers/?order=sideways", headers=AUTH)
    assert refused.status_code == 400 and "order" in refused.json()["error"]


async def test_two_round_trips_whatever_the_queues(
    peer: Peer, redis_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch of EXISTS over every queue, one of script calls over those with schedulers:
    counted by Redis (commandstats) and at the client (each batch sent)."""
    await seed(peer)
    await node(peer, "many-queues", "--count", "40")
    refs = sorted((await discovered()).queues)
    await all_schedulers(refs)  # the script loaded
    batches: list[int] = []
    send = fastpipe.execute

    async def counted(client: Any, commands: Any, packed: Any = None) -> Any:
        batches.append(len(commands))
        return await send(client, commands, packed)

    monkeypatch.setattr(fastpipe, "execute", counted)
    redis_client.config_resetstat()
    found = await all_schedulers(refs)
    stats = redis_client.info("commandstats")
    assert len(found.rows) == 3 and len(refs) > 40
    assert batches == [len(refs), 3]
    # Redis counts the commands scripts run too: each script asks whether a next job exists.
    assert stats["cmdstat_exists"]["calls"] == len(refs) + 3
    assert stats["cmdstat_evalsha"]["calls"] == 3


USERS = {"amy": "amy-pass", "operator": "s3cret-pass"}
RULES = [
    {"QUEUES": "mail", "VIEW": ["user:amy"], "OPERATE": ["user:operator"]},
    {"QUEUES": "*", "OPERATE": ["user:operator"]},
]


@pytest.fixture
def scoped(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(BASIC_AUTH_PLAIN=USERS, QUEUE_ACCESS=RULES)
    with override_settings(BULLPEN=config):
        yield


def basic(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


async def test_only_the_queues_a_user_may_view_and_act_only_where_allowed(
    client: AsyncClient, peer: Peer, scoped: None, bullpen_settings: dict[str, Any]
) -> None:
    await seed(peer)
    amy = await client.get("/queues/api/schedulers/", headers=basic("amy"))
    assert [row["queue"] for row in amy.json()["schedulers"]] == ["mail"]
    page = (await client.get("/queues/schedulers/", headers=basic("amy"))).content.decode()
    assert 'data-queue="mail"' in page and 'data-queue="reports"' not in page
    assert 'data-testid="run-scheduler"' not in page  # amy may view, not act

    operator = (await client.get("/queues/schedulers/", headers=basic("operator"))).content.decode()
    assert operator.count('data-testid="run-scheduler"') == 3
    assert operator.index('data-scheduler-id="digest"') < operator.index('data-queue="billing"')
    with override_settings(
        BULLPEN={**bullpen_settings, "BASIC_AUTH_PLAIN": USERS, "READ_ONLY": True}
    ):
        read_only = await client.get("/queues/schedulers/", headers=basic("operator"))
        refused = await client.post(
            "/queues/api/queues/mail/schedulers/digest/run/", headers=basic("operator")
        )
    assert 'data-testid="run-scheduler"' not in read_only.content.decode()
    assert 'data-testid="scheduler-overdue"' in read_only.content.decode()
    assert refused.status_code == 403


async def test_hostile_scheduler_ids_and_names_are_escaped(client: AsyncClient, peer: Peer) -> None:
    hostile = '<img src=x onerror="alert(1)">/x'
    await node(peer, "upsert-scheduler", "--queue", "mail", "--id", hostile, "--every", "60000")
    await node(
        peer,
        "upsert-scheduler",
        "--queue",
        "mail",
        "--id",
        "plain",
        "--every",
        "60000",
        "--name",
        "<script>alert(2)</script>",
    )
    (row, _plain) = sorted(await schedulers(client), key=lambda row: row["id"])
    assert row["id"] == hostile
    response = await client.get("/queues/schedulers/", headers=AUTH)
    page = response.content.decode()
    assert response.status_code == 200
    assert "<img src=x" not in page and "<script>alert(2)" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;/x" in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
