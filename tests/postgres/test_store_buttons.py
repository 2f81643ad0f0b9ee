"""The buttons of actions a PostgreSQL store refuses (400) are not on its queues' pages, and are
on a Redis queue's: the pages and the guard read one set (queues/postgres/store_actions.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient

from queues.postgres.store_actions import POSTGRES_ACTIONS
from tests.support.action_requests import AUTH, post
from tests.support.peer import Peer, PostgresPeer

# Each refused action's control, by the page that shows it (data-testid).
QUEUE_CONTROLS = ('data-testid="limits"', 'data-testid="release-rate-limit"')
ACTIVE_JOB_CONTROLS = (
    'data-testid="move-to-wait"',
    'data-testid="move-to-failed"',
)
DELAYED_JOB_CONTROLS = ('data-testid="reschedule"',)


async def page(client: AsyncClient, path: str) -> str:
    response = await client.get(f"/queues/{path}", headers=AUTH)
    assert response.status_code == 200, (path, response.content[:2000])
    return response.content.decode()


async def controls(client: AsyncClient, slug: str, delayed: str) -> dict[str, str]:
    return {
        "queue": await page(client, f"q/{slug}/?state=delayed"),
        "active": await page(client, f"q/{slug}/jobs/long-1/"),
        "delayed": await page(client, f"q/{slug}/jobs/{delayed}/"),
    }


@pytest.fixture
def both(pg_peer: PostgresPeer, peer: Peer, with_pg: dict[str, Any]) -> tuple[str, str]:
    """The same scenario on each store; a delayed job's id on each."""
    on_pg = pg_peer("scenario", "--queue", "shop")["ids"]["delayed"][0]
    on_redis = peer("scenario", "--queue", "shop")["ids"]["delayed"][0]
    return on_pg, on_redis


async def test_refused_actions_have_no_button_on_a_postgres_queue(
    client: AsyncClient, both: tuple[str, str]
) -> None:
    on_pg, on_redis = both
    store = await controls(client, "shop@pg", on_pg)
    redis = await controls(client, "shop@main", on_redis)
    for kind, wanted in (
        ("queue", QUEUE_CONTROLS),
        ("active", ACTIVE_JOB_CONTROLS),
        ("delayed", DELAYED_JOB_CONTROLS),
    ):
        for control in wanted:
            assert control in redis[kind], (kind, control)
            assert control not in store[kind], (kind, control)
    # What the store does keeps its buttons there.
    assert 'data-testid="add-job"' in store["queue"] and "/empty/" in store["queue"]
    assert "/jobs/" in store["delayed"] and "/promote/" in store["delayed"]
    assert 'data-testid="cancel"' in store["active"]  # the store's workers hear it too


@pytest.mark.django_db(transaction=True)
async def test_the_guard_refuses_what_the_pages_leave_out(
    client: AsyncClient, both: tuple[str, str]
) -> None:
    for action, path in (
        ("move-to-failed", "queues/shop@pg/jobs/long-1/move-to-failed/"),
        ("move-to-wait", "queues/shop@pg/jobs/long-1/move-to-wait/"),
        ("concurrency", "queues/shop@pg/concurrency/"),
    ):
        assert action not in POSTGRES_ACTIONS
        refused = await post(client, path, {"concurrency": "2"})
        assert refused.status_code == 400, (path, refused.content[:300])
        assert "not available yet" in refused.json()["error"]
