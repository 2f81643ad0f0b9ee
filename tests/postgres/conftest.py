"""Bullpen with two connections: ``main`` on the test Redis (Bullpen's own state, and Redis
queues) and ``pg`` on the test PostgreSQL, where Node BullMQ writes through its Postgres store."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from tests.support.peer import PostgresPeer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import WorkerProcess


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


@pytest.fixture
def pg_workers(
    redis_server: RedisServer, postgres_url: str, tmp_path: Path
) -> Iterator[Callable[..., WorkerProcess]]:
    """Worker processes of a site whose ``pg`` connection is the test PostgreSQL (``pg_url``:
    another database); ``alone``: a site with no Redis connection."""
    started: list[WorkerProcess] = []

    def start(*args: str, pg_url: str = postgres_url, alone: bool = False) -> WorkerProcess:
        connections = {"pg": pg_url} if alone else {"main": redis_server.url, "pg": pg_url}
        process = WorkerProcess(
            redis_server.url,
            tmp_path / f"worker-{len(started)}.log",
            *args,
            "--connection",
            "pg",
            env={"BULLPEN_TEST_CONNECTIONS": json.dumps(connections), "BULLPEN_TEST_TASKS": "0"},
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
