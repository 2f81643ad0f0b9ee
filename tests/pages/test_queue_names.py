"""Access decisions are made on a queue's one URL name: another spelling of the same queue
(``bull:<name>``) cannot act on a read-only queue, and pages and reads redirect to the name."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from dashboard.models import AuditEntry
from dashboard.pages.landing import confirmation
from queues.actions.result import ActionResult
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


@pytest.fixture
def scenario(peer: Peer) -> dict[str, Any]:
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")
    return ids


@pytest.fixture
def shop_read_only(bullpen_settings: dict[str, Any]) -> Any:
    config = {**bullpen_settings, "QUEUE_OPTIONS": {"shop": {"read_only": True}}}
    with override_settings(BULLPEN=config):
        yield


@pytest.mark.usefixtures("shop_read_only")
async def test_prefixed_spelling_cannot_act_on_a_read_only_queue(
    client: AsyncClient, scenario: dict[str, Any], redis_client: Any
) -> None:
    failed = scenario["ids"]["failed"][0]
    for path in ("pause/", "empty/", f"jobs/{failed}/remove/", "retry/"):
        spelled = await client.post(f"/queues/api/queues/bull:shop/{path}", headers=AUTH)
        assert spelled.status_code == 404, (path, spelled.content)
        assert "its name in URLs is 'shop'" in spelled.json()["error"]
        direct = await client.post(f"/queues/api/queues/shop/{path}", headers=AUTH)
        assert direct.status_code == 403 and "Read-only" in direct.json()["error"]
    assert not redis_client.hget("bull:shop:meta", "paused")
    assert redis_client.exists(f"bull:shop:{failed}")
    assert await AuditEntry.objects.filter(status=404, queue="shop").acount() == 4


async def test_other_spellings_redirect_to_the_queue_name(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    page = await client.get("/queues/q/bull:shop/?state=failed")
    assert page.status_code == 302 and page["Location"] == "/queues/q/shop/?state=failed"
    job_id = scenario["ids"]["failed"][0]
    api = await client.get(f"/queues/api/queues/bull:shop/jobs/{job_id}/")
    assert api.status_code == 302
    assert api["Location"] == f"/queues/api/queues/shop/jobs/{job_id}/"
    assert (await client.get("/queues/q/shop/")).status_code == 200
    assert (await client.get("/queues/q/nope:shop/")).status_code == 404


@pytest.mark.usefixtures("shop_read_only")
async def test_pause_all_skips_read_only_queues_and_says_so(
    client: AsyncClient, scenario: dict[str, Any], redis_client: Any
) -> None:
    response = await client.post("/queues/api/pause-all/", headers=AUTH)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["skipped"] == ["shop"] and "shop" not in body["queues"]
    assert body["count"] == len(body["queues"]) >= 2
    assert not redis_client.hget("bull:shop:meta", "paused")
    assert all(redis_client.hget(f"bull:{q}:meta", "paused") == "1" for q in body["queues"])
    redis_client.hset("bull:shop:meta", "paused", "1")
    resumed = (await client.post("/queues/api/resume-all/", headers=AUTH)).json()
    assert resumed["skipped"] == ["shop"]
    assert redis_client.hget("bull:shop:meta", "paused") == "1"


def test_confirmation_names_the_skipped_queues() -> None:
    result = ActionResult("pause-all", None, count=2, detail={"skipped": ["shop", "mail"]})
    assert confirmation(result) == "2 queues paused; read-only, skipped: shop, mail"
    assert confirmation(ActionResult("resume-all", None, count=1)) == "1 queue resumed"
