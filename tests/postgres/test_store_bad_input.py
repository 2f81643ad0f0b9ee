"""A Postgres store Bullpen cannot use says why, for that store alone: a dropped table, a role
refused BullMQ's schema, a schema BullMQ never migrated. The Redis connection beside it is
still shown, and nothing is written to the store."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from tests.support.peer import Peer, PostgresPeer
from tests.support.servers.postgres_server import PostgresServer


@pytest.fixture
def broken_after(postgres_server: PostgresServer) -> Iterator[None]:
    """The test breaks BullMQ's schema; the next test's Node BullMQ migrates it afresh."""
    yield
    postgres_server.psql("DROP SCHEMA IF EXISTS bullmq CASCADE")


async def overview(client: AsyncClient) -> dict[str, Any]:
    response = await client.get("/queues/api/queues/")
    assert response.status_code == 200, response.content[:500]
    body: dict[str, Any] = response.json()
    return body


async def test_a_dropped_table_names_the_store_and_keeps_the_others(
    client: AsyncClient,
    peer: Peer,
    postgres_server: PostgresServer,
    scenario: dict[str, Any],
    broken_after: None,
) -> None:
    peer("add", "--queue", "mail", "--name", "hello", "--data", "{}")
    assert {q["slug"] for q in (await overview(client))["queues"]} >= {"mail@main", "shop@pg"}
    postgres_server.psql("DROP TABLE bullmq.job CASCADE")
    body = await overview(client)
    assert [q["slug"] for q in body["queues"]] == ["mail@main"]
    down = {entry["name"]: entry["error"] for entry in body["connections"] if "error" in entry}
    assert 'relation "job" does not exist' in down["pg"] and "migrations" in down["pg"]
    page = await client.get("/queues/api/queues/shop@pg/jobs/?state=waiting")
    assert page.status_code == 503 and "run BullMQ's migrations" in page.json()["error"]
    shown = (await client.get("/queues/")).content.decode()
    assert "PostgreSQL store <strong>pg</strong> cannot be read" in shown
    assert "Redis connection <strong>pg</strong>" not in shown


async def test_a_role_refused_the_schema_is_named(
    client: AsyncClient,
    pg_peer: PostgresPeer,
    postgres_server: PostgresServer,
    with_pg: dict[str, Any],
) -> None:
    pg_peer("add", "--queue", "shop", "--name", "hello", "--data", "{}")
    postgres_server.psql("DROP ROLE IF EXISTS outsider; CREATE ROLE outsider LOGIN")
    outsider = f"postgresql://outsider@127.0.0.1:{postgres_server.port}/bullmq"
    config = {**with_pg, "CONNECTIONS": {**with_pg["CONNECTIONS"], "pg": outsider}}
    with override_settings(BULLPEN=config):
        page = await client.get("/queues/api/queues/shop@pg/jobs/?state=waiting")
        body = await overview(client)
    assert page.status_code == 503
    assert "refused BullMQ's schema to Bullpen" in page.json()["error"]
    assert "permission denied" in page.json()["error"]
    assert [e["name"] for e in body["connections"] if not e["reachable"]] == ["pg"]


@pytest.mark.django_db(transaction=True)
async def test_a_schema_never_migrated_is_not_migrated_by_bullpen(
    client: AsyncClient, postgres_server: PostgresServer, with_pg: dict[str, Any]
) -> None:
    url = f"postgresql://bullpen@127.0.0.1:{postgres_server.port}/bullmq?schema=untouched"
    config = {**with_pg, "CONNECTIONS": {**with_pg["CONNECTIONS"], "pg": url}}
    with override_settings(BULLPEN=config):
        body = await overview(client)
        added = await client.post(
            "/queues/api/queues/shop@pg/add/",
            {"name": "x"},
            headers={"Authorization": "Basic b3BlcmF0b3I6czNjcmV0LXBhc3M="},
        )
    down = {entry["name"]: entry["error"] for entry in body["connections"] if "error" in entry}
    assert "schema 'untouched' is missing" in down["pg"]
    assert added.status_code in (404, 503)
    assert (
        postgres_server.psql(
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'untouched'"
        ).strip()
        == "0"
    )
