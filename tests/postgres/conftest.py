"""Bullpen with two connections: ``main`` on the test Redis (Bullpen's own state, and Redis
queues) and ``pg`` on the test PostgreSQL, where Node BullMQ writes through its Postgres store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from tests.support.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.peer import PostgresPeer
from tests.support.redis_server import RedisServer


@pytest.fixture
def with_pg(
    bullpen_settings: dict[str, Any],
    redis_server: RedisServer,
    postgres_url: str,
    transactional_db: None,
) -> Iterator[dict[str, Any]]:
    """The site's database too: a store queue's pause reason is kept there."""
    config = {
        **bullpen_settings,
        "CONNECTIONS": {"main": redis_server.url, "pg": postgres_url},
    }
    del config["REDIS_URL"]
    with override_settings(BULLPEN=config):
        yield config


@pytest.fixture
def scenario(pg_peer: PostgresPeer, with_pg: dict[str, Any]) -> dict[str, Any]:
    """Node's scenario (a job in every state, a flow, a paused queue) on the Postgres store."""
    return pg_peer("scenario", "--queue", "shop")


@pytest.fixture
def pg_site(redis_server: RedisServer, postgres_url: str, tmp_path: Path) -> Iterator[LiveServer]:
    """A daphne server of a site with both connections."""
    connections = {"main": {"URL": redis_server.url}, "pg": {"URL": postgres_url}}
    server = start_bullpen(
        redis_server.url,
        tmp_path / "daphne.log",
        {"BULLPEN_TEST_CONNECTIONS": json.dumps(connections)},
    )
    yield server
    stop_bullpen(server, graceful=False)
