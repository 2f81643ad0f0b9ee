"""Job schedulers created, updated and run now through the API: checked in Redis, read back by
Node BullMQ, and a run-now job processed by a Node worker with the schedule left alone."""

from __future__ import annotations

import base64
import re
import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.action_requests import AUTH, node, ok, post
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

HOUR = 3_600_000


async def test_create_then_update_a_scheduler_as_node_reads_it(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add", "--queue", "mail", "--name", "seed")
    body = await ok(
        client,
        "queues/mail/schedulers/",
        {
            "id": "digest",
            "every": "1 h",
            "name": "send-digest",
            "data": '{"to": "team"}',
            "opts": '{"attempts": 3, "removeOnComplete": 10}',
            "limit": "5",
        },
    )
    assert (body["action"], body["scheduler"], body["created"]) == (
        "upsert-scheduler",
        "digest",
        True,
    )
    assert body["repeat"] == {"every": HOUR, "limit": 5}
    assert redis_client.hget("bull:mail:repeat:digest", "every") == str(HOUR)
    assert redis_client.zscore("bull:mail:repeat", "digest") is not None
    seen = await node(peer, "scheduler", "--queue", "mail", "--id", "digest")
    scheduler = seen["scheduler"]
    assert (scheduler["name"], scheduler["every"], scheduler["limit"]) == ("send-digest", HOUR, 5)
    assert scheduler["template"]["data"] == {"to": "team"}
    assert scheduler["template"]["opts"]["attempts"] == 3
    assert seen["nextJobs"] == [body["nextJobId"]]

    # Updated to a cron pattern in a time zone: Node reads the new settings, still one next job.
    body = await ok(
        client,
        "queues/mail/schedulers/",
        {"id": "digest", "pattern": "0 9 * * 1-5", "tz": "Europe/Paris", "name": "send-digest"},
    )
    assert body["created"] is False
    seen = await node(peer, "scheduler", "--queue", "mail", "--id", "digest")
    assert (seen["scheduler"]["pattern"], seen["scheduler"]["tz"]) == (
        "0 9 * * 1-5",
        "Europe/Paris",
    )
    assert "every" not in seen["scheduler"]
    assert len(seen["nextJobs"]) == 1
    listed = (await client.get("/queues/api/queues/mail/schedulers/")).json()["schedulers"]
    assert [(s["id"], s["pattern"], s["tz"]) for s in listed] == [
        ("digest", "0 9 * * 1-5", "Europe/Paris")
    ]
    audited = [e.status async for e in AuditEntry.objects.filter(action="upsert-scheduler")]
    assert audited == [200, 200]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"every": "1 h"}, "id is required"),
        ({"id": "s"}, "Give every (a duration) or pattern (cron)"),
        ({"id": "s", "every": "1 h", "pattern": "* * * * *"}, "one of them"),
        ({"id": "s", "pattern": "every day"}, "pattern is not a cron pattern"),
        ({"id": "s", "pattern": "* * * * *", "tz": "Mars/Base"}, "tz is not a time zone"),
        ({"id": "s", "every": "1 h", "tz": "UTC"}, "tz goes with a cron pattern"),
        ({"id": "s", "every": "soon"}, "every: "),
        ({"id": "s", "every": "1 h", "opts": '{"jobId": "x"}'}, "the scheduler sets jobId"),
        ({"id": "s", "every": "1 h", "opts": '{"nope": 1}'}, "Unsupported options: nope"),
        ({"id": "s", "every": "1 h", "limit": "0"}, "limit must be"),
        (
            {"id": "s", "every": "1 h", "start_date": "2027-01-02", "end_date": "2027-01-01"},
            "end_date must come after start_date",
        ),
        ({"id": "s", "every": "1 h", "end_date": "tomorrow"}, "end_date must be ms"),
    ],
)
async def test_bad_scheduler_settings_are_400(
    client: AsyncClient, peer: Peer, redis_client: Any, given: dict[str, str], message: str
) -> None:
    await node(peer, "add", "--queue", "mail", "--name", "seed")
    refused = await post(client, "queues/mail/schedulers/", given)
    assert refused.status_code == 400 and message in refused.json()["error"], refused.json()
    assert not redis_client.exists("bull:mail:repeat")


async def test_run_now_adds_one_job_node_processes_and_leaves_the_schedule(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add", "--queue", "mail", "--name", "seed")
    await node(peer, "work", "--queue", "mail", "--count", "1")
    # Starting in an hour: its first run waits, delayed, and the worker sees only run-now's job.
    start = int(time.time() * 1000) + HOUR
    made = await ok(
        client,
        "queues/mail/schedulers/",
        {
            "id": "hourly",
            "every": str(HOUR),
            "start_date": str(start),
            "data": '{"n": 1}',
            "opts": '{"attempts": 2}',
        },
    )
    assert redis_client.zrange("bull:mail:delayed", 0, -1) == [made["nextJobId"]]
    before = (
        redis_client.zscore("bull:mail:repeat", "hourly"),
        redis_client.hgetall("bull:mail:repeat:hourly"),
        redis_client.zrange("bull:mail:delayed", 0, -1),
    )
    body = await ok(client, "queues/mail/schedulers/hourly/run/")
    (job_id,) = body["jobIds"]
    assert (body["action"], body["scheduler"]) == ("run-scheduler", "hourly")
    assert job_id != made["nextJobId"]
    job = redis_client.hgetall(f"bull:mail:{job_id}")
    assert (job["name"], job["data"]) == ("hourly", '{"n":1}')
    assert "rjk" not in job and "repeatJobKey" not in job  # not one of the schedule's runs
    assert job_id in redis_client.lrange("bull:mail:wait", 0, -1)

    await node(peer, "work", "--queue", "mail", "--count", "1")
    seen = await node(peer, "job-status", "--queue", "mail", "--id", job_id)
    assert seen["state"] == "completed"
    after = (
        redis_client.zscore("bull:mail:repeat", "hourly"),
        redis_client.hgetall("bull:mail:repeat:hourly"),
        redis_client.zrange("bull:mail:delayed", 0, -1),
    )
    assert after == before  # same next run, same iteration count, same delayed job
    scheduled = await node(peer, "scheduler", "--queue", "mail", "--id", "hourly")
    assert scheduled["nextJobs"] == [made["nextJobId"]]

    missing = await post(client, "queues/mail/schedulers/nope/run/")
    assert missing.status_code == 409 and "No job scheduler 'nope'" in missing.json()["error"]


async def test_scheduler_controls_only_for_those_who_may_act(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    await node(peer, "add", "--queue", "mail", "--name", "seed")
    await ok(client, "queues/mail/schedulers/", {"id": "hourly", "every": "1 h"})
    marks = ['data-testid="run-scheduler"', 'data-testid="new-scheduler"', "edit-scheduler"]
    operator = (await client.get("/queues/q/mail/schedulers/", headers=AUTH)).content.decode()
    assert all(mark in operator for mark in marks)
    anonymous = (await client.get("/queues/q/mail/schedulers/")).content.decode()
    assert not any(mark in anonymous for mark in marks) and "hourly" in anonymous
    with override_settings(
        BULLPEN={**bullpen_settings, "QUEUE_OPTIONS": {"mail": {"read_only": True}}}
    ):
        read_only = (await client.get("/queues/q/mail/schedulers/", headers=AUTH)).content.decode()
    assert not any(mark in read_only for mark in marks)


ROUTES = ["queues/mail/schedulers/", "queues/mail/schedulers/hourly/run/"]


@pytest.mark.parametrize("path", ROUTES)
async def test_scheduler_actions_are_guarded(
    client: AsyncClient,
    peer: Peer,
    path: str,
    bullpen_settings: dict[str, Any],
    redis_client: Any,
) -> None:
    await node(peer, "add", "--queue", "mail", "--name", "seed")
    await ok(client, "queues/mail/schedulers/", {"id": "hourly", "every": "1 h"})
    await AuditEntry.objects.all().adelete()
    before = redis_client.dbsize()
    url = f"/queues/api/{path}"
    given = {"id": "other", "every": "1 min"}
    anonymous = await client.post(url, given)
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"].startswith("Basic")
    wrong = await client.post(
        url,
        given,
        headers={"Authorization": "Basic " + base64.b64encode(b"operator:guess").decode()},
    )
    assert wrong.status_code == 401
    put = await client.put(url, headers=AUTH)
    assert put.status_code == 405
    cross = await client.post(url, given, headers={**AUTH, "Origin": "https://evil.example"})
    assert cross.status_code == 403 and "cross-site" in cross.json()["error"]
    fetch_site = await client.post(url, given, headers={**AUTH, "Sec-Fetch-Site": "cross-site"})
    assert fetch_site.status_code == 403
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        read_only = await client.post(url, given, headers=AUTH)
    assert read_only.status_code == 403 and "Read-only" in read_only.json()["error"]
    unknown = await client.post(url.replace("/mail/", "/nope/"), given, headers=AUTH)
    assert unknown.status_code == 404
    assert redis_client.dbsize() == before  # nothing changed
    refusals = [e async for e in AuditEntry.objects.filter(status=403)]
    assert len(refusals) == 3 and all(e.username == "operator" for e in refusals)

    admin = await User.objects.acreate_superuser("admin", "admin@example.com", "pw")
    session = AsyncClient(enforce_csrf_checks=True)
    await session.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    no_token = await session.post(url, given, headers={"Origin": "http://testserver"})
    assert no_token.status_code == 403 and "CSRF" in no_token.json()["error"]
    page = (await session.get("/queues/q/mail/")).content.decode()
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page)
    assert token
    done = await session.post(
        url, given, headers={"Origin": "http://testserver", "X-CSRFToken": token[1]}
    )
    assert done.status_code == 200, done.content
    assert redis_client.dbsize() > before
