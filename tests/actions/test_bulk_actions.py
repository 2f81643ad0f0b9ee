"""Bulk actions (real Redis, Node BullMQ, the executor on the test's loop):
true counts when several run at once, cancelling, the status API, and the page's answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.bulk.launch import summary
from dashboard.models import AuditEntry
from queues.bulk.record import ActionRecord, RequestedBy
from tests.support.action_requests import AUTH, post
from tests.support.action_waits import accepted, finished
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


async def seed_failed(peer: Peer, queue: str, count: int) -> None:
    """``count`` jobs failed by a real Node worker (one attempt each)."""
    await asyncio.to_thread(
        peer, "add-bulk", "--queue", queue, "--name", "n", "--count", str(count)
    )
    await asyncio.to_thread(
        peer,
        "work",
        "--queue",
        queue,
        "--count",
        str(count),
        "--fail",
        "--concurrency",
        "200",
        "--timeout-ms",
        "60000",
    )


@pytest.fixture
def small_batches(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    """Batches of 100 with a pause between them: long enough to overlap, or to cancel."""
    actions = {"batch_size": 100, "pause_ms": 20}
    with override_settings(BULLPEN={**bullpen_settings, "ACTIONS": actions}):
        yield


async def test_concurrent_retry_alls_and_a_clean_count_only_what_each_moved(
    client: AsyncClient, peer: Peer, redis_client: Any, small_batches: None
) -> None:
    await seed_failed(peer, "crowd", 3000)
    assert redis_client.zcard("bull:crowd:failed") == 3000
    answers = await asyncio.gather(
        post(client, "queues/crowd/retry/?state=failed"),
        post(client, "queues/crowd/retry/?state=failed"),
        post(client, "queues/crowd/clean/?state=failed&grace_ms=0"),
    )
    # A second retry-all of the same failed jobs while the first runs is refused, naming it.
    codes = [answer.status_code for answer in answers[:2]]
    assert sorted(codes) == [202, 409], [a.content[:300] for a in answers]
    first, refused = answers[codes.index(202)], answers[codes.index(409)]
    bodies = [accepted(first), accepted(answers[2])]
    error = refused.json()["error"]
    assert "already" in error and bodies[0]["id"] in error, error
    # Each counts the failed jobs there were when it was asked for (the first may have begun).
    assert max(b["total"] for b in bodies) == 3000
    ends = await asyncio.gather(*(finished(client, body) for body in bodies))
    assert [e["state"] for e in ends] == ["done", "done"]
    retried, cleaned = (e["count"] for e in ends)
    # True counts: together they moved every job once, and each reports only its own.
    assert retried + cleaned == 3000
    assert redis_client.zcard("bull:crowd:failed") == 0
    assert redis_client.llen("bull:crowd:wait") == retried
    assert redis_client.zcard("bull:crowd:completed") == 0
    audited = {
        e.detail["actionId"]: e.count async for e in AuditEntry.objects.filter(detail__phase="done")
    }
    assert audited == {body["id"]: end["count"] for body, end in zip(bodies, ends, strict=True)}
    refusals = [e async for e in AuditEntry.objects.filter(status=409)]
    assert [(e.action, e.queue) for e in refusals] == [("retry-all", "crowd")]
    # Once it has ended, a retry-all may be asked for again.
    assert (await post(client, "queues/crowd/retry/?state=failed")).status_code == 202


async def test_cancel_stops_it_at_the_next_batch(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    await seed_failed(peer, "halt", 3000)
    slow = {"batch_size": 100, "pause_ms": 50}  # 30 batches, 1.5 s: time to cancel
    with override_settings(BULLPEN={**bullpen_settings, "ACTIONS": slow}):
        body = accepted(await post(client, "queues/halt/retry/?state=failed"))
    for _ in range(200):
        status = (await client.get(body["statusUrl"])).json()
        if status["count"] >= 300:
            break
        await asyncio.sleep(0.02)
    cancel = await post(client, f"actions/{body['id']}/cancel/")
    assert cancel.status_code == 202, cancel.content
    assert cancel.json()["cancelRequested"] is True
    count_when_asked = cancel.json()["count"]
    end = await finished(client, body)
    assert end["state"] == "cancelled" and end["error"] == "Cancelled by operator"
    moved = end["count"]
    assert 300 <= moved < 3000
    # Nothing lost, nothing moved after the cancel: the count is what is waiting.
    assert redis_client.llen("bull:halt:wait") == moved
    assert redis_client.zcard("bull:halt:failed") == 3000 - moved
    assert end["text"] == f"Cancelled: {moved} jobs retried. Cancelled by operator"
    rows = {
        (e.action, e.detail.get("phase"), e.status, e.count) async for e in AuditEntry.objects.all()
    }
    assert rows == {
        ("retry-all", "started", 202, 0),
        ("cancel", None, 202, count_when_asked),
        ("retry-all", "cancelled", 200, moved),
    }
    again = await post(client, f"actions/{body['id']}/cancel/")
    assert again.status_code == 409 and "already ended (cancelled)" in again.json()["error"]
    assert (await post(client, "actions/nope/cancel/")).status_code == 404
    assert (await client.get("/queues/api/actions/nope/")).status_code == 404


async def test_a_page_follows_it_and_curl_reads_its_status(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await seed_failed(peer, "pages", 3)
    answer = await post(client, "queues/pages/retry/?state=failed", **{"HX-Request": "true"})
    body = accepted(answer)
    # The page stays where it is and follows the action; it does not reload at once.
    assert answer["HX-Reswap"] == "none" and "HX-Refresh" not in answer
    assert body["cancelUrl"] == f"/queues/api/actions/{body['id']}/cancel/"
    end = await finished(client, body)
    assert (end["count"], end["text"]) == (3, "3 jobs retried")
    # Readers see how it went; operators also see who asked.
    assert "user" not in end
    operator = (await client.get(body["statusUrl"], headers=AUTH)).json()
    assert operator == {**end, "user": "operator"}
    listed = (await client.get("/queues/api/actions/?queue=pages", headers=AUTH)).json()
    assert [a["id"] for a in listed["actions"]] == [body["id"]]
    assert (await client.get("/queues/api/actions/?queue=other")).json() == {"actions": []}
    assert (await client.get("/queues/api/actions/?limit=0")).status_code == 400


async def test_a_page_opened_while_it_runs_shows_its_bar_at_once(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    await seed_failed(peer, "opened", 1000)
    await seed_failed(peer, "beside", 1)
    slow = {"batch_size": 100, "pause_ms": 300}  # 10 batches, 3 s: the page opens meanwhile
    with override_settings(BULLPEN={**bullpen_settings, "ACTIONS": slow}):
        body = accepted(await post(client, "queues/opened/retry/?state=failed"))
        page = (await client.get("/queues/q/opened/?state=failed", headers=AUTH)).content.decode()
        beside = (await client.get("/queues/q/beside/", headers=AUTH)).content.decode()
        end = await finished(client, body)
    # The bar came with the page, in the page's words, with Cancel for an operator; not on
    # another queue's page.
    assert f'data-action-id="{body["id"]}"' in page and "<progress" in page
    assert "Retry all: " in page and 'data-testid="bulk-cancel"' in page
    assert "data-action-id" not in beside
    assert end["state"] == "done"
    after = (await client.get("/queues/q/opened/?state=failed")).content.decode()
    assert "data-action-id" not in after


async def test_a_failure_group_is_fixed_when_asked_for(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await seed_failed(peer, "grp", 4)
    group = (await client.get("/queues/api/queues/grp/failure-groups/")).json()["groups"][0]
    body = accepted(
        await post(client, "queues/grp/failure-groups/remove/", {"signature": group["signature"]})
    )
    assert body["total"] == 4 and body["params"]["signature"] == group["signature"]
    # The group's label is kept with the action, for the audit log to say which group it was.
    assert "failed on purpose" in body["params"]["group"]
    end = await finished(client, body)
    assert (end["count"], end["text"]) == (4, "4 jobs removed")
    assert redis_client.zcard("bull:grp:failed") == 0
    gone = await post(client, "queues/grp/failure-groups/retry/", {"signature": "nope"})
    assert gone.status_code == 400


def test_what_a_finished_action_says() -> None:
    record = ActionRecord(
        id="a1",
        kind="retry-all",
        prefix="bull",
        queue="mail",
        params={"state": "failed"},
        requested_by=RequestedBy("ada", "basic"),
        anchor_ms=1,
        state="interrupted",
        count=3000,
        total=20000,
        error="Its server stopped",
    )
    assert ActionRecord.from_fields(record.to_fields()) == record
    assert summary(record) == "Interrupted: 3000 jobs retried. Its server stopped"
    record.state, record.error = "done", ""
    assert summary(record) == "3000 jobs retried"
