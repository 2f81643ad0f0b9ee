"""Detaching a child from the parent that waits for it (BullMQ's removeChildDependency: the
parent goes on, and a Node worker completes it) and pausing a queue with a reason (kept under
Bullpen's own prefix, shown, audited, cleared on resume)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from tests.support.action_requests import AUTH, node, ok, post
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


async def test_detach_a_child_and_its_parent_goes_on_to_a_node_worker(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    ids = await node(peer, "flow", "--queue", "tree", "--children", "1", "--grandchildren", "0")
    root, (child,) = ids["root"], ids["mid"]
    assert (await node(peer, "job-status", "--queue", "tree", "--id", root))["state"] == (
        "waiting-children"
    )
    page = (await client.get(f"/queues/q/tree-mid/jobs/{child}/", headers=AUTH)).content.decode()
    assert 'data-testid="detach-child"' in page

    body = await ok(client, f"queues/tree-mid/jobs/{child}/detach/")
    assert (body["action"], body["jobIds"], body["parentKey"]) == (
        "detach-child",
        [child],
        f"bull:tree:{root}",
    )
    assert not redis_client.hexists(f"bull:tree-mid:{child}", "parentKey")
    # The parent no longer waits: Node sees it waiting, and a Node worker completes it.
    seen = await node(peer, "job-status", "--queue", "tree", "--id", root)
    assert seen["state"] == "waiting" and seen["dependencies"]["unprocessed"] == 0
    await node(peer, "work", "--queue", "tree", "--count", "1", "--timeout-ms", "10000")
    assert (await node(peer, "job-status", "--queue", "tree", "--id", root))["state"] == (
        "completed"
    )
    # The child lives on, on its own.
    assert (await node(peer, "job-status", "--queue", "tree-mid", "--id", child))["exists"]
    page = (await client.get(f"/queues/q/tree-mid/jobs/{child}/", headers=AUTH)).content.decode()
    assert 'data-testid="detach-child"' not in page

    again = await post(client, f"queues/tree-mid/jobs/{child}/detach/")
    assert again.status_code == 409 and "no parent" in again.json()["error"]
    missing = await post(client, "queues/tree-mid/jobs/nope/detach/")
    assert missing.status_code == 404
    audited = [e async for e in AuditEntry.objects.filter(action="detach-child").order_by("id")]
    assert [(e.status, e.job_ids) for e in audited] == [
        (200, [child]),
        (409, [child]),
        (404, ["nope"]),
    ]


async def test_detach_is_refused_under_read_only(
    client: AsyncClient, peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    ids = await node(peer, "flow", "--queue", "ro", "--children", "1", "--grandchildren", "0")
    child = ids["mid"][0]
    read_only = {**bullpen_settings, "QUEUE_OPTIONS": {"ro-mid": {"read_only": True}}}
    with override_settings(BULLPEN=read_only):
        refused = await post(client, f"queues/ro-mid/jobs/{child}/detach/")
        assert refused.status_code == 403
        page = await client.get(f"/queues/q/ro-mid/jobs/{child}/", headers=AUTH)
        assert 'data-testid="detach-child"' not in page.content.decode()
    assert redis_client.hexists(f"bull:ro-mid:{child}", "parentKey")


async def test_pause_with_a_reason_is_shown_audited_and_cleared_on_resume(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add", "--queue", "mail", "--name", "send", "--data", "{}")
    reason = "SMTP relay <down> & retrying"
    body = await ok(client, "queues/mail/pause/", {"reason": f"  {reason} "})
    assert (body["action"], body["reason"]) == ("pause", reason)
    assert redis_client.hget("bull:mail:meta", "paused") == "1"
    # Kept under Bullpen's own prefix, never in BullMQ's keys.
    assert redis_client.get("bullpen:pause-reason:bull:mail") == reason
    assert not any(reason in str(redis_client.hgetall("bull:mail:meta")) for _ in [0])
    escaped = "SMTP relay &lt;down&gt; &amp; retrying"
    for path in ("/queues/q/mail/", "/queues/"):
        page = (await client.get(path, headers=AUTH)).content.decode()
        assert 'data-testid="pause-reason"' in page and escaped in page, path
        assert reason not in page, path
    entry = await AuditEntry.objects.aget(action="pause")
    assert entry.detail["reason"] == reason
    audit = (await client.get("/queues/audit/", headers=AUTH)).content.decode()
    assert f"reason: {escaped}" in audit

    too_long = await post(client, "queues/mail/pause/", {"reason": "x" * 501})
    assert too_long.status_code == 400 and "reason" in too_long.json()["error"]
    # From the page, the reason is what the person typed in the prompt.
    await ok(client, "queues/mail/resume/")
    assert not redis_client.exists("bullpen:pause-reason:bull:mail")
    page = (await client.get("/queues/q/mail/", headers=AUTH)).content.decode()
    # The place the live page fills when the queue is paused again: hidden and empty.
    empty = '<span class="pause-reason muted small" data-testid="pause-reason" hidden></span>'
    assert empty in page
    response = await post(client, "queues/mail/pause/", {}, HX_Request="true", HX_Prompt="disk")
    assert response.status_code == 200
    assert redis_client.get("bullpen:pause-reason:bull:mail") == "disk"
    # A pause without a reason leaves none of an earlier one.
    await ok(client, "queues/mail/pause/")
    assert not redis_client.exists("bullpen:pause-reason:bull:mail")
    assert (await node(peer, "inspect", "--queue", "mail"))["isPaused"] is True
