"""Failure trends: each failure group's last day, kept in Redis across retries and removals."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from django.test import AsyncClient

from queues.failures.failure_groups import forget_shared
from tests.support.action_waits import accepted, finished
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


async def fail_jobs(peer: Peer, errors: list[str]) -> None:
    for index, message in enumerate(errors):
        await asyncio.to_thread(
            peer, "add", "--queue", "mail", "--name", f"n{index}", "--data",
            json.dumps({"error": message}),
        )  # fmt: skip
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", str(len(errors)), "--fail")


def by_reason(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {group["reason"]: group for group in body["groups"]}


def trend_total(group: dict[str, Any]) -> int:
    return sum(count for _minute, count in group["trend"]["lastDay"])


async def test_a_burst_of_failures_is_counted_once_and_kept_after_retry_and_removal(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await fail_jobs(peer, ["timeout after 3000 ms"] * 3 + ["disk full on /dev/sda1"] * 2)
    groups = by_reason((await client.get("/queues/api/queues/mail/failure-groups/")).json())
    timeout, disk = groups["timeout after <n> ms"], groups["disk full on /dev/sda<n>"]
    assert (trend_total(timeout), trend_total(disk)) == (3, 2)
    assert timeout["trend"]["new"] and timeout["trend"]["since"] == timeout["firstSeen"]

    # Read again (a fresh scan): the same failures are not counted twice.
    forget_shared("mail")
    again = by_reason((await client.get("/queues/api/queues/mail/failure-groups/")).json())
    assert trend_total(again["timeout after <n> ms"]) == 3

    # Retried, the jobs leave the failed set; failing again, they count again.
    retried = await client.post(
        "/queues/api/queues/mail/failure-groups/retry/",
        {"signature": timeout["signature"]},
        headers=AUTH,
    )
    assert (await finished(client, accepted(retried)))["state"] == "done"
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "3", "--fail")
    after = by_reason((await client.get("/queues/api/queues/mail/failure-groups/")).json())
    assert after["timeout after <n> ms"]["count"] == 3
    assert trend_total(after["timeout after <n> ms"]) == 6
    assert after["timeout after <n> ms"]["trend"]["since"] == timeout["firstSeen"]

    # Removed, a group leaves the page, but its day stays in Redis, bounded by an expiry.
    removed = await client.post(
        "/queues/api/queues/mail/failure-groups/remove/",
        {"signature": disk["signature"]},
        headers=AUTH,
    )
    assert (await finished(client, accepted(removed)))["state"] == "done"
    left = (await client.get("/queues/api/queues/mail/failure-groups/")).json()
    assert [group["reason"] for group in left["groups"]] == ["timeout after <n> ms"]
    keys = sorted(redis_client.scan_iter("bullpen:trends:*"))
    assert len(keys) == 2
    kept = {
        key: sum(int(v) for f, v in redis_client.hgetall(key).items() if f.startswith("m"))
        for key in keys
    }
    assert sorted(kept.values()) == [2, 6]
    assert all(0 < redis_client.ttl(key) <= 25 * 3600 for key in keys)

    # The page draws each group's day, says it is new and since when.
    html = (await client.get("/queues/q/mail/groups/")).content.decode()
    assert 'aria-label="6 failures in the last day, at most' in html
    assert html.count('data-testid="group-new"') == 1
    assert html.count('data-testid="group-since"') == 1
