"""Bad requests get a clear JSON error with the right status; Redis going away is a 503."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
import redis.exceptions
from django.test import AsyncClient, override_settings

from dashboard.api.fast_path import FastReadAPI
from queues.redis.errors import reason
from tests.support.peer import Peer
from tests.support.servers.redis_server import free_port

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


@pytest.fixture
def queue(peer: Peer) -> str:
    peer("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    return "mail"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("state=nope", "Unknown state"),
        ("state=waiting&per_page=5", "per_page must be between 10 and 300"),
        ("state=waiting&per_page=301", "per_page must be between 10 and 300"),
        ("state=waiting&page=0", "page must be 1 or more"),
        ("state=waiting&page=abc", "page must be a whole number"),
        ("state=waiting&order=sideways", "order must be"),
    ],
)
async def test_bad_parameters_are_400(
    client: AsyncClient, queue: str, query: str, message: str
) -> None:
    response = await client.get(f"/queues/api/queues/{queue}/jobs/?{query}")
    assert response.status_code == 400
    assert message in response.json()["error"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("failure-groups/?budget=100000000000000000000", "budget must be between 1 and 100000"),
        ("failure-groups/?budget=-100000000000000000000", "budget must be between 1 and 100000"),
        ("failure-groups/?budget=-5", "budget must be between 1 and 100000"),
        ("failure-groups/?budget=0", "budget must be between 1 and 100000"),
        ("jobs/?page=100000000000000000000", "page must be at most 1000000"),
        ("jobs/?page=" + "9" * 5000, "page must be a whole number"),
        ("search/?q=x&budget=-1", "budget must be between 1 and 1000000"),
        ("search/?q=x&max_matches=1e9", "max_matches must be a whole number between 1 and"),
        ("search/?q=" + "x" * 3000, "q is too long (at most 2000 characters)"),
    ],
)
async def test_out_of_range_parameters_are_400(
    client: AsyncClient, queue: str, path: str, message: str
) -> None:
    response = await client.get(f"/queues/api/queues/{queue}/{path}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert message in response.json()["error"]


async def test_the_fast_path_answers_bad_parameters_with_400(queue: str) -> None:
    async def django(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the fast path answers this route itself")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": f"/queues/api/queues/{queue}/jobs/",
        "query_string": b"page=100000000000000000000",
        "headers": [(b"host", b"testserver")],
    }
    await FastReadAPI(django)(scope, receive, send)
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"]) == {"error": "page must be at most 1000000"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("path", "data", "message"),
    [
        ("jobs/1/priority/", {"priority": "1e30"}, "priority must be a whole number between 0"),
        ("jobs/1/priority/", {"priority": "9" * 30}, "priority must be between 0 and 2097152"),
        ("clean/", {"state": "completed", "limit": "-1"}, "limit must be between 0 and"),
        ("clean/", {"state": "completed", "grace_ms": "9" * 30}, "grace_ms must be between 0"),
        ("add/", {"name": "x", "opts": '{"delay": "soon"}'}, "delay must be a whole number"),
        ("add/", {"name": "x" * 2000}, "name is too long (at most 1024 characters)"),
        ("bulk/", {"action": "retry", "ids": "x" * 2000}, "a job id has at most 1024 characters"),
    ],
)
async def test_out_of_range_action_parameters_are_400(
    client: AsyncClient, queue: str, path: str, data: dict[str, str], message: str
) -> None:
    response = await client.post(f"/queues/api/queues/{queue}/{path}", data, headers=AUTH)
    assert response.status_code == 400
    assert message in response.json()["error"]


async def test_bad_parameters_on_pages_are_400(client: AsyncClient, queue: str) -> None:
    response = await client.get(f"/queues/q/{queue}/?state=nope")
    assert response.status_code == 400
    assert "Unknown state" in response.content.decode()


async def test_unknown_queue_and_job_are_404(client: AsyncClient, queue: str) -> None:
    for path in ("/queues/api/queues/nope/jobs/", "/queues/api/queues/nope/jobs/1/"):
        response = await client.get(path)
        assert response.status_code == 404
        assert "Unknown queue" in response.json()["error"]
    response = await client.get(f"/queues/api/queues/{queue}/jobs/999/")
    assert response.status_code == 404
    assert "No job '999'" in response.json()["error"]
    assert (await client.get("/queues/q/nope/")).status_code == 404
    assert (await client.get(f"/queues/q/{queue}/jobs/999/")).status_code == 404


async def test_writes_to_read_routes_are_405(client: AsyncClient, queue: str) -> None:
    for path in ("/queues/api/queues/", f"/queues/api/queues/{queue}/jobs/"):
        response = await client.post(path)
        assert response.status_code == 405
        assert response["Allow"] == "GET, HEAD"


async def test_redis_unreachable_is_503(
    client: AsyncClient, bullpen_settings: dict[str, Any]
) -> None:
    dead = {
        **bullpen_settings,
        "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "REDIS_TIMEOUT": 1,
    }
    with override_settings(BULLPEN=dead):
        for path in (
            "/queues/api/queues/",
            "/queues/api/queues/mail/jobs/",
            "/queues/api/queues/mail/jobs/1/",
        ):
            response = await client.get(path)
            assert response.status_code == 503, path
            why = response.json()["error"].removeprefix("Redis is unreachable: ")
            assert why.strip() and why != response.json()["error"]
        page = await client.get("/queues/")
        assert page.status_code == 503
        assert "Redis is unreachable" in page.content.decode()


async def test_new_queue_is_found_between_scans(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "DISCOVERY_INTERVAL": 3600}):
        assert (await client.get("/queues/api/queues/")).json()["queues"] == []
        peer("add", "--queue", "late", "--name", "n", "--data", "{}")
        # The cached overview list lags, but the queue's own pages work at once.
        response = await client.get("/queues/api/queues/late/jobs/")
        assert response.status_code == 200 and response.json()["total"] == 1


def test_a_reason_is_never_empty() -> None:
    assert reason(TimeoutError()) == "no answer in time"
    assert reason(redis.exceptions.ConnectionError()) == "the connection was closed"
    assert reason(OSError()) == "OSError"
    assert reason(redis.exceptions.ConnectionError("refused")) == "refused"


@pytest.mark.django_db(transaction=True)
async def test_a_body_over_the_limit_is_413_in_json(
    client: AsyncClient, queue: str, redis_client: Any
) -> None:
    from dashboard.models import AuditEntry

    # A 10 MB paste into Add a job, as a form and as a JSON body: Django refuses to read it.
    pasted = json.dumps({"blob": "x" * (10 * 1024 * 1024)})
    form = await client.post(
        f"/queues/api/queues/{queue}/add/", {"name": "big", "data": pasted}, headers=AUTH
    )
    as_json = await client.post(
        f"/queues/api/queues/{queue}/add/",
        json.dumps({"name": "big", "data": pasted}),
        content_type="application/json",
        headers=AUTH,
    )
    for response in (form, as_json):
        assert response.status_code == 413
        assert response["Content-Type"] == "application/json"
        error = response.json()["error"]
        assert "too large" in error and "2.5 MB" in error and "2621440 bytes" in error
    assert redis_client.llen(f"bull:{queue}:wait") == 1  # only the fixture's job
    entry = await AuditEntry.objects.filter(action="add").alatest("id")
    assert entry.status == 413 and "too large" in entry.error


@pytest.mark.django_db(transaction=True)
async def test_too_many_fields_is_400_in_json(client: AsyncClient, queue: str) -> None:
    fields = "&".join(f"f{n}=1" for n in range(1500))
    read = await client.get(f"/queues/api/queues/{queue}/jobs/?{fields}")
    act = await client.post(
        f"/queues/api/queues/{queue}/pause/",
        fields,
        content_type="application/x-www-form-urlencoded",
        headers=AUTH,
    )
    for response in (read, act):
        assert response.status_code == 400
        assert response["Content-Type"] == "application/json"
        assert "Bad request" in response.json()["error"]
