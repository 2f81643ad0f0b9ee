"""A site whose only connection is a PostgreSQL store (no Redis at all): the system checks pass,
the pages answer, retry, pause with a reason and resume work, the reason kept in the site's
database; the features that keep their state in Redis say so on their pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import checks
from django.test import AsyncClient, override_settings

from queues.models import StorePauseReason
from tests.support.action_requests import AUTH, ok
from tests.support.peer import PostgresPeer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pg_only(bullpen_settings: dict[str, Any], postgres_url: str) -> Iterator[dict[str, Any]]:
    config = {**bullpen_settings, "CONNECTIONS": {"pg": postgres_url}}
    del config["REDIS_URL"]
    with override_settings(BULLPEN=config):
        yield config


@pytest.fixture
def shop(pg_peer: PostgresPeer, pg_only: dict[str, Any]) -> dict[str, Any]:
    return pg_peer("scenario", "--queue", "shop")


async def page(client: AsyncClient, path: str) -> str:
    response = await client.get(f"/queues/{path}", headers=AUTH)
    assert response.status_code == 200, (path, response.content[:3000])
    return response.content.decode()


def test_the_system_checks_pass_and_name_what_is_off(pg_only: dict[str, Any]) -> None:
    found = checks.run_checks()
    assert not [m for m in found if m.level >= checks.ERROR], found
    off = [m for m in found if m.id == "bullpen.W022"]
    assert len(off) == 1, found
    for feature in ("alerts", "history", "failure groups", "bulk actions"):
        assert feature in off[0].msg, feature
    assert "Cancel" not in off[0].msg  # it reaches a store's workers through the store
    assert not [m for m in found if m.id == "bullpen.E022"]


async def test_overview_queue_and_job_pages(
    client: AsyncClient, shop: dict[str, Any], pg_only: dict[str, Any]
) -> None:
    overview = await page(client, "")
    assert 'data-queue="shop"' in overview and "shop-paused" in overview
    assert 'data-testid="needs-redis"' in overview
    assert 'data-testid="redis-fold"' not in overview  # no Redis servers to show
    failed = await page(client, "q/shop/?state=failed")
    assert "charge-9" in failed and "card declined: 0000" in failed
    job = await page(client, "q/shop/jobs/charge-9/")
    assert "attempt 3: charging card 0000" in job
    listed = json.loads(await page(client, "api/queues/"))
    shop_row = next(q for q in listed["queues"] if q["name"] == "shop")
    assert shop_row["counts"]["failed"] == 2
    with override_settings(BULLPEN={**pg_only, "METRICS_TOKEN": "t0ken-for-tests"}):
        metrics = await client.get(
            "/queues/metrics", headers={"Authorization": "Bearer t0ken-for-tests"}
        )
    assert metrics.status_code == 200, metrics.content[:2000]
    assert 'queue="shop",state="failed"} 2.0' in metrics.content.decode()


@pytest.mark.parametrize(
    ("path", "feature"),
    [
        ("q/shop/alerts/", "alerts"),
        ("q/shop/history/section/", "history"),
        ("q/shop/history/", "history"),
        ("q/shop/groups/", "groups"),
    ],
)
async def test_pages_of_features_kept_in_redis_say_they_need_it(
    client: AsyncClient, shop: dict[str, Any], path: str, feature: str
) -> None:
    body = await page(client, path)
    assert f'data-testid="needs-redis" data-feature="{feature}"' in body
    assert "Redis" in body


async def test_apis_of_features_kept_in_redis_answer_empty(
    client: AsyncClient, shop: dict[str, Any]
) -> None:
    assert json.loads(await page(client, "api/actions/")) == {"actions": []}
    gone = await client.get("/queues/api/actions/abc@pg/", headers=AUTH)
    assert gone.status_code == 404
    alerts = json.loads(await page(client, "api/alerts/"))
    assert alerts["held"] == [] and not any(alerts["alerts"].values())


async def test_retry_and_pause_with_a_reason_then_resume(
    client: AsyncClient, pg_peer: PostgresPeer, shop: dict[str, Any]
) -> None:
    await ok(client, "queues/shop/jobs/charge-9/retry/")
    assert pg_peer("job-status", "--queue", "shop", "--id", "charge-9")["state"] == "waiting"

    reason = "card processor <down> & retrying"
    body = await ok(client, "queues/shop/pause/", {"reason": reason})
    assert body["reason"] == reason
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is True
    kept = [(r.connection, r.queue, r.reason) async for r in StorePauseReason.objects.all()]
    assert kept == [("pg", "shop", reason)]
    escaped = "card processor &lt;down&gt; &amp; retrying"
    for path in ("q/shop/", ""):
        shown = await page(client, path)
        assert escaped in shown and reason not in shown, path

    await ok(client, "queues/shop/resume/")
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is False
    assert not await StorePauseReason.objects.aexists()
    assert escaped not in await page(client, "q/shop/")


async def test_actions_over_several_queues(
    client: AsyncClient, pg_peer: PostgresPeer, shop: dict[str, Any]
) -> None:
    paused = await ok(client, "pause-all/")
    assert paused["count"] >= 2
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is True
    await ok(client, "resume-all/")
    assert pg_peer("inspect", "--queue", "shop")["isPaused"] is False
    # A group's retry runs each queue's at once, as a store's retry-all does.
    retried = await ok(client, "groups/retry/", {"group": "head", "key": "shop", "delimiter": "-"})
    assert retried["count"] == 2 and retried["queues"] == ["shop"]
    assert pg_peer("job-status", "--queue", "shop", "--id", "charge-9")["state"] == "waiting"
