"""The audit log says what was done: a limit's old and new values, the query a bulk action on
matches acted on, the group of a group action, and when, with the time zone."""

from __future__ import annotations

import asyncio
import base64
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.action_waits import accepted, finished
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


async def act(client: AsyncClient, path: str, data: dict[str, str]) -> Any:
    response = await client.post(f"/queues/api/queues/{path}", data, headers=AUTH)
    assert response.status_code in (200, 202), response.content[:500]
    return response


async def audit_page(client: AsyncClient) -> str:
    return str((await client.get("/queues/audit/", headers=AUTH)).content.decode())


async def latest(action: str) -> AuditEntry:
    return await AuditEntry.objects.filter(action=action).alatest("id")


async def failed_jobs(peer: Peer, queue: str, data: str, count: int) -> None:
    for _ in range(count):
        await asyncio.to_thread(peer, "add", "--queue", queue, "--name", "charge", "--data", data)
    await asyncio.to_thread(peer, "work", "--queue", queue, "--count", str(count), "--fail")


async def test_limit_changes_keep_the_old_and_new_values(client: AsyncClient, peer: Peer) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "welcome")
    await act(client, "mail/concurrency/", {"concurrency": "5"})
    await act(client, "mail/concurrency/", {"concurrency": "10"})
    assert (await latest("concurrency")).detail == {"concurrency": 10, "previous": 5}
    await act(client, "mail/concurrency/", {"concurrency": ""})
    assert (await latest("concurrency")).detail == {"concurrency": None, "previous": 10}
    await act(client, "mail/rate-limit/", {"max": "10", "duration_ms": "1000"})
    await act(client, "mail/rate-limit/", {"max": "3", "duration_ms": "60000"})
    assert (await latest("rate-limit")).detail == {
        "rateLimit": {"max": 3, "duration": 60000},
        "previous": {"max": 10, "duration": 1000},
    }
    page = await audit_page(client)
    assert "global concurrency: none → 5" in page
    assert "global concurrency: 5 → 10" in page and "global concurrency: 10 → none" in page
    assert "rate limit: 10 per 1000 ms → 3 per 60000 ms" in page


async def test_act_on_matches_and_group_retries_name_what_they_took(
    client: AsyncClient, peer: Peer
) -> None:
    await failed_jobs(peer, "billing", '{"customer": "acme-42"}', 2)
    path = "billing/search/retry/?" + urlencode({"q": "acme-42"})
    await finished(client, accepted(await act(client, path, {})))
    started = await AuditEntry.objects.filter(action="retry-matches").afirst()
    assert started is not None and started.detail["query"] == "acme-42"

    await failed_jobs(peer, "mail", '{"error": "SMTP timeout after 30000 ms"}', 2)
    groups = (await client.get("/queues/api/queues/mail/failure-groups/")).json()["groups"]
    (group,) = groups
    retried = await act(client, "mail/failure-groups/retry/", {"signature": group["signature"]})
    body = accepted(retried)
    await finished(client, body)
    entries = [e async for e in AuditEntry.objects.filter(action="retry-group")]
    assert entries and all(e.detail["group"].startswith(group["reason"]) for e in entries)

    page = await audit_page(client)
    assert "query: acme-42; states: failed" in page
    assert re.search(r"group: SMTP timeout after &lt;n&gt; ms", page), page[-3000:]


async def test_times_carry_their_zone(client: AsyncClient, peer: Peer) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "welcome")
    await act(client, "mail/pause/", {})
    with override_settings(TIME_ZONE="Europe/Berlin"):
        page = await audit_page(client)
    when = re.search(r'<time datetime="([^"]+)" data-testid="audit-when">([^<]+)</time>', page)
    assert when, page[-2000:]
    assert when[1].endswith(("+01:00", "+02:00")) and when[2].endswith(("CET", "CEST"))
