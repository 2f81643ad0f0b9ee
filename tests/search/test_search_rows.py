"""Search results as list rows: ``render=row`` streams each match as the queue page's own row."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any
from urllib.parse import quote

import pytest
from django.test import AsyncClient
from django.test.html import Element, parse_html

from tests.support.markup import attribute, elements
from tests.support.peer import Peer
from tests.support.search_reads import stream

OPERATOR = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
HOSTILE_NAME = '"><img src=x onerror=alert(1)>'
HOSTILE_REASON = '<script>alert(2)</script>"><img src=x onerror=alert(3)> boom'


def page_rows(page: str) -> dict[str, Element]:
    return {
        str(attribute(row, "data-job-id")): row for row in elements(page, "tr", data_job_id=None)
    }


def steady(row: str | Element) -> Element:
    """The row without its relative times ("5 s ago"): they depend on the moment a row is
    rendered, not on the job."""
    parsed = parse_html(row) if isinstance(row, str) else copy.deepcopy(row)
    for span in elements(parsed, "span", class_="rel"):
        span.children.clear()
    return parsed


@pytest.fixture
def failed_jobs(peer: Peer) -> dict[str, str]:
    """Failed jobs of queue ``mail``: plain, hostile, and one whose data the list cuts."""
    ids = {
        "plain": peer(
            "add", "--queue", "mail", "--name", "send", "--data", json.dumps({"error": "boom 1"})
        )["id"],
        "hostile": peer(
            "add",
            "--queue",
            "mail",
            "--name",
            HOSTILE_NAME,
            "--data",
            json.dumps({"error": HOSTILE_REASON, "html": "<b>bold</b>"}),
        )["id"],
        "big": peer(
            "add",
            "--queue",
            "mail",
            "--name",
            "send",
            "--data",
            json.dumps({"error": "boom big", "body": "x" * 5000}),
        )["id"],
    }
    peer("work", "--queue", "mail", "--fail", "--count", "3", "--concurrency", "3")
    return ids


@pytest.mark.django_db(transaction=True)  # signing in asks axes' table about lockouts
@pytest.mark.parametrize("headers", [{}, OPERATOR], ids=["anonymous", "operator"])
async def test_a_search_row_is_the_list_row_of_the_same_job(
    client: AsyncClient, failed_jobs: dict[str, str], headers: dict[str, str]
) -> None:
    page = await client.get("/queues/q/mail/?state=failed", headers=headers)
    assert page.status_code == 200
    listed = page_rows(page.content.decode())
    lines = await stream(
        client, "/queues/api/queues/mail/search/?state=failed&q=boom&render=row", headers
    )
    found = {line["job"]["id"]: line["html"] for line in lines if line["type"] == "job"}
    assert set(found) == set(failed_jobs.values()) == set(listed)
    for job_id, row in found.items():
        assert steady(row) == steady(listed[job_id]), job_id
    checkbox = 'class="job-select"'
    assert all((checkbox in row) == bool(headers) for row in found.values())
    # The search reads 16 KiB of data to match; its row shows what the list shows (2 KiB, cut).
    assert "cut · " in found[failed_jobs["big"]]
    hostile = found[failed_jobs["hostile"]]
    assert "<script>" not in hostile and "<img" not in hostile
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in hostile
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in hostile
    # What the page says under its box comes worded by the server, one match or many.
    assert lines[-1]["text"] == "scanned 3 of 3, 3 matches"
    one = await stream(
        client,
        "/queues/api/queues/mail/search/?state=failed&q=boom&render=row&max_matches=1",
        {**headers, "accept-language": "de"},
    )
    assert one[-1]["text"] == (
        "1 von 3 durchsucht, 1 Treffer"
        " (die ersten 1 angezeigt: grenzen Sie die Suche für weitere ein)"
    )


async def test_api_clients_get_the_same_lines_as_before(
    client: AsyncClient, failed_jobs: dict[str, str]
) -> None:
    lines = await stream(client, f"/queues/api/queues/mail/search/?state=failed&q={quote('boom')}")
    jobs = [line for line in lines if line["type"] == "job"]
    assert len(jobs) == 3
    assert all(set(line) == {"type", "job"} for line in jobs)
    assert jobs[0]["job"]["state"] == "failed" and "queueQualifiedName" not in jobs[0]["job"]
    assert lines[-1] == {"type": "progress", "scanned": 3, "total": 3, "matched": 3, "done": True}


async def test_an_unknown_rendering_is_refused(client: AsyncClient, peer: Peer) -> None:
    peer("add", "--queue", "mail", "--name", "send", "--data", "{}")
    response = await client.get("/queues/api/queues/mail/search/?state=waiting&q=a&render=page")
    assert response.status_code == 400
    assert "render" in response.json()["error"]


async def test_a_search_can_end_at_the_most_matches_asked_for(
    client: AsyncClient, failed_jobs: dict[str, str], redis_client: Any
) -> None:
    order = redis_client.zrevrange("bull:mail:failed", 0, -1)  # the order the scan reads
    sends = [failed_jobs["plain"], failed_jobs["big"]]  # the hostile job has another name
    lines = await stream(
        client, "/queues/api/queues/mail/search/?state=failed&q=name:send&max_matches=2"
    )
    assert sorted(line["job"]["id"] for line in lines if line["type"] == "job") == sorted(sends)
    last = max(order.index(job_id) for job_id in sends) + 1
    assert lines[-1] == {
        "type": "progress",
        "scanned": last,
        "total": 3,
        "matched": 2,
        "done": True,
        "full": True,
    }
    one = await stream(client, "/queues/api/queues/mail/search/?state=failed&q=boom&max_matches=1")
    assert [line["type"] for line in one] == ["job", "progress"]
    assert one[-1]["scanned"] == 1 and one[-1]["full"] is True
