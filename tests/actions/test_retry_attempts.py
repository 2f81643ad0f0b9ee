"""Retrying a job that used all its attempts: one more attempt, said so; or, asked for, fresh
attempts (BullMQ's resetAttemptsMade / resetAttemptsStarted), which a Node worker then uses."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from django.test import AsyncClient

from dashboard.pages.landing import confirmation
from queues.actions.result import ActionResult
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


async def node(peer: Peer, *args: str) -> Any:
    return await asyncio.to_thread(peer, *args)


async def exhausted_job(peer: Peer) -> str:
    """A job allowed 3 attempts that failed all 3 in a Node worker."""
    added = await node(
        peer, "add", "--queue", "mail", "--name", "send", "--opts", '{"attempts": 3}'
    )
    worked = await node(peer, "work", "--queue", "mail", "--count", "1", "--fail")
    assert worked["failed"] == 1
    return str(added["id"])


async def node_job(peer: Peer, job_id: str) -> dict[str, Any]:
    found = await node(peer, "inspect", "--queue", "mail", "--ids", job_id)
    return dict(found["details"][job_id])


async def test_fresh_attempts_start_from_zero_and_run_in_full(
    client: AsyncClient, peer: Peer
) -> None:
    job_id = await exhausted_job(peer)
    assert (await node_job(peer, job_id))["attemptsMade"] == 3
    response = await client.post(
        f"/queues/api/queues/mail/jobs/{job_id}/retry/", {"reset_attempts": "1"}, headers=AUTH
    )
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert body["resetAttempts"] is True and body["attempts"] == 3
    seen = await node_job(peer, job_id)
    assert (seen["state"], seen["attemptsMade"], seen["attemptsStarted"]) == ("waiting", 0, 0)
    # A Node worker runs all three attempts again before the job fails for good.
    assert (await node(peer, "work", "--queue", "mail", "--count", "1", "--fail"))["failed"] == 1
    seen = await node_job(peer, job_id)
    assert (seen["state"], seen["attemptsMade"]) == ("failed", 3)
    assert len(seen["stacktrace"]) >= 3


async def test_a_plain_retry_of_an_exhausted_job_says_one_attempt(
    client: AsyncClient, peer: Peer
) -> None:
    job_id = await exhausted_job(peer)
    response = await client.post(f"/queues/api/queues/mail/jobs/{job_id}/retry/", headers=AUTH)
    assert response.status_code == 200, response.content[:500]
    body = response.json()
    assert body["exhausted"] is True and (body["attemptsMade"], body["attempts"]) == (3, 3)
    assert confirmation(ActionResult("retry", "mail", [job_id], 1, body)) == (
        f"Job {job_id} retried for one more attempt (4 of 3): its attempts were used"
    )
    # One attempt only: the next failure is final, at 4 of 3.
    assert (await node(peer, "work", "--queue", "mail", "--count", "1", "--fail"))["failed"] == 1
    seen = await node_job(peer, job_id)
    assert (seen["state"], seen["attemptsMade"]) == ("failed", 4)


async def test_the_job_page_offers_fresh_attempts(client: AsyncClient, peer: Peer) -> None:
    job_id = await exhausted_job(peer)
    page = (await client.get(f"/queues/q/mail/jobs/{job_id}/", headers=AUTH)).content.decode()
    assert 'data-testid="attempts-used"' in page and "(3 of 3)" in page
    assert 'data-testid="retry-fresh"' in page and "reset_attempts" in page
    assert "for one more attempt (4 of 3)" in page
