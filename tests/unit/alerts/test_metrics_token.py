"""/metrics takes its token from the Authorization header only (no Redis here: a scrape reports
it down)."""

from __future__ import annotations

from typing import Any

from django.test import AsyncClient, override_settings


async def test_the_metrics_token_is_taken_from_the_header_only(
    bullpen_settings: dict[str, Any],
) -> None:
    client = AsyncClient()
    config = {**bullpen_settings, "METRICS_TOKEN": "t0ken", "REDIS_TIMEOUT": 0.5}
    with override_settings(BULLPEN=config):
        in_url = await client.get("/queues/metrics?token=t0ken")
        assert in_url.status_code == 401
        assert "Authorization: Bearer <token>" in in_url.content.decode()
        assert in_url["WWW-Authenticate"].startswith("Bearer")
        both = await client.get(
            "/queues/metrics?token=t0ken", headers={"Authorization": "Bearer t0ken"}
        )
        assert both.status_code == 401
        header = await client.get("/queues/metrics", headers={"Authorization": "Bearer t0ken"})
        assert header.status_code == 200
        assert "bullpen_redis_up 0.0" in header.content.decode()  # nothing listens there
