"""Every route of ``dashboard.urls`` that names a queue, asked by a user scoped by
``QUEUE_ACCESS``: a queue hidden from that user answers exactly as a queue that does not exist,
on every method, so no answer tells the two apart (an oracle) or shows the hidden one."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from bullmq import Queue
from django.test import AsyncClient, override_settings
from django.urls import reverse

from tests.support.peer import Peer
from tests.support.routes import Route, every_route
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

USERS = {"amy": "amy-pass", "bob": "bob-pass"}
RULES = [
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["scope:t1"]},
    {"QUEUES": "t2-*", "VIEW": ["scope:t2"], "OPERATE": ["scope:t2"]},
]
HIDDEN = "t2-mail"  # bob's, with a job and a scheduler
MISSING = "t1-gone"  # amy would see it, were it there
# Routes that name no queue in their path: what they show is narrowed elsewhere
# (tests/auth/test_queue_access.py). A new route naming a queue is walked below without a change.
QUEUELESS = {
    "overview",
    "overview-rows",
    "sign-in",
    "sign-out",
    "audit",
    "find",
    "search",
    "api-search-all",
    "all-schedulers",  # every queue's schedulers: only the visible ones (tests/schedulers/)
    "api-all-schedulers",
    "go",
    "go-suggestions",
    "metrics",
    "api-find",
    "api-alerts",
    "api-queues",
    "pause-all",
    "resume-all",
    "group-pause",
    "group-resume",
    "group-retry",
    "api-actions",
    "api-action",
    "cancel-action",
    "not-found",
    "api-redis",  # server-wide: only superusers see it once QUEUE_ACCESS is set
    "redis-health",
    "api-audit",  # the rows of visible queues only (tests/audit/)
    "api-saved-searches",  # a restricted user's own only (tests/saved_searches/)
    "delete-saved-search",
}
SAMPLES = {"job_id": "1", "scheduler_id": "nightly", "action": "retry"}


def auth(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": "Basic " + token}


@pytest.fixture
def scoped(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    config = {key: value for key, value in bullpen_settings.items() if key != "READ_ACCESS"}
    config.update(
        BASIC_AUTH_PLAIN=USERS,
        BASIC_AUTH_SCOPES={"amy": ["t1"], "bob": ["t2"]},
        QUEUE_ACCESS=RULES,
    )
    with override_settings(BULLPEN=config):
        yield


def queue_routes() -> list[Route]:
    routes = list(every_route())
    named = [p for p in routes if "queue" in p.arguments]
    assert {p.name for p in routes} - {p.name for p in named} == QUEUELESS
    return named


def same_answer(one: bytes, other: bytes) -> bool:
    """Equal but for what is made afresh for each page (CSRF tokens, the socket's ticket)."""
    token = rb'(X-CSRFToken": "|name="csrfmiddlewaretoken" value="|\?ticket=)[^"]+'
    return re.sub(token, rb"\1", one) == re.sub(token, rb"\1", other)


async def test_a_hidden_queue_answers_as_a_missing_one_on_every_route(
    client: AsyncClient, peer: Peer, redis_server: RedisServer, scoped: None
) -> None:
    peer("add", "--queue", HIDDEN, "--name", "secret", "--data", '{"tenant": "t2"}')
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    queue = Queue(HIDDEN, {"connection": connection})
    try:
        await queue.upsertJobScheduler("nightly", {"every": 3_600_000}, "report", {}, {})
    finally:
        await queue.close()
        await connection.aclose()
    seen = await client.get(f"/queues/api/queues/{HIDDEN}/schedulers/", headers=auth("bob"))
    assert seen.status_code == 200 and "nightly" in seen.content.decode()
    walked: list[tuple[str, str]] = []
    told: list[tuple[str, str | None, int, int]] = []  # routes that told the two apart
    for route in queue_routes():
        args = {name: SAMPLES.get(name, "x") for name in route.arguments}
        for method in ("GET", "POST"):
            answers = []
            for queue in (HIDDEN, MISSING):
                path = reverse(f"bullpen:{route.name}", kwargs={**args, "queue": queue})
                answer = await client.generic(method, path, headers=auth("amy"))
                answers.append(answer)
            hidden, missing = answers
            body = hidden.content.replace(HIDDEN.encode(), MISSING.encode())
            if (
                hidden.status_code != missing.status_code
                or hidden.status_code not in (404, 405)
                or not same_answer(body, missing.content)
                or b"secret" in hidden.content
                or b"nightly" in hidden.content
            ):
                told.append((method, route.name, hidden.status_code, missing.status_code))
            walked.append((method, route.name))
    assert told == [], "\n".join(map(str, told))
    assert ("GET", "api-schedulers") in walked and len(walked) > 40
    # Nothing was done to the hidden queue.
    inspected = peer("inspect", "--queue", HIDDEN)
    assert inspected["counts"]["waiting"] + inspected["counts"]["delayed"] >= 1
