"""The pages and API that cover every queue answer with a Postgres store configured beside a
Redis one: the Redis queues as before, the store's queues where they can be read."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from tests.support.peer import Peer

EVERYWHERE = (
    "api/find/?id=charge-9",
    "api/alerts/",
    "api/redis/",
    "api/schedulers/",
    "schedulers/",
    "find/?id=charge-9",
    "search/?q=card",
    "redis/",
    "rows/",
    "?only=problems",
    "?group=connection",
)


@pytest.mark.django_db(transaction=True)  # the search page lists saved searches
@pytest.mark.parametrize("path", EVERYWHERE)
async def test_every_queue_pages_answer(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any], path: str
) -> None:
    peer("add", "--queue", "mail", "--name", "hello", "--data", "{}")
    response = await client.get(f"/queues/{path}")
    assert response.status_code == 200, response.content[:2000]


async def test_metrics_name_both_stores_queues(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any], with_pg: dict[str, Any]
) -> None:
    peer("add", "--queue", "mail", "--name", "hello", "--data", "{}")
    with override_settings(BULLPEN={**with_pg, "METRICS_TOKEN": "t0ken-for-tests"}):
        response = await client.get(
            "/queues/metrics", headers={"Authorization": "Bearer t0ken-for-tests"}
        )
    assert response.status_code == 200, response.content[:2000]
    text = response.content.decode()
    assert 'queue="shop",state="failed"' in text.replace('connection="pg",', "")
    assert 'bullpen_redis_up{connection="main"} 1.0' in text
