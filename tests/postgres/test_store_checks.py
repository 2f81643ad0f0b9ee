"""``check --deploy`` on a PostgreSQL store: a readable BullMQ schema passes; an unreachable
server, a missing schema, a schema for a newer BullMQ and a revoked grant are each named, for
that connection alone."""

from __future__ import annotations

from django.test import override_settings

from dashboard.checks import postgres_store, redis_reachable
from tests.support.peer import PostgresPeer
from tests.support.servers.postgres_server import PostgresServer
from tests.support.servers.redis_server import RedisServer, free_port


def _warnings(redis_url: str, pg_url: str) -> list[str]:
    config = {"CONNECTIONS": {"state": redis_url, "pg": pg_url}, "PREFIXES": ["bull"]}
    with override_settings(BULLPEN=config):
        found = postgres_store.check_postgres_stores() + redis_reachable.check_redis()
    return [f"{message.id} {message.msg}" for message in found]


def test_a_store_migrated_by_node_bullmq_passes(
    pg_peer: PostgresPeer, postgres_url: str, redis_server: RedisServer
) -> None:
    pg_peer("add", "--queue", "mail", "--name", "hello", "--data", "{}")
    assert _warnings(redis_server.url, postgres_url) == []


def test_each_wrong_store_is_named_and_the_redis_connection_is_not(
    pg_peer: PostgresPeer, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    pg_peer("add", "--queue", "mail", "--name", "hello", "--data", "{}")
    base = f"postgresql://bullpen@127.0.0.1:{postgres_server.port}/bullmq"

    down = _warnings(redis_server.url, f"postgresql://bullpen@127.0.0.1:{free_port()}/bullmq")
    assert len(down) == 1 and down[0].startswith("bullpen.W021")
    assert "'pg'" in down[0] and "is unreachable" in down[0]

    missing = _warnings(redis_server.url, f"{base}?schema=nothing_here")
    assert len(missing) == 1 and "schema 'nothing_here' is missing" in missing[0]

    # A schema whose last migration asks for BullMQ 7.
    postgres_server.psql(
        "DROP SCHEMA IF EXISTS future CASCADE; CREATE SCHEMA future; "
        "CREATE TABLE future.migration (version int PRIMARY KEY, name text, "
        "min_client_version int NOT NULL); "
        "INSERT INTO future.migration SELECT version, name, 6 FROM bullmq.migration; "
        "INSERT INTO future.migration VALUES (99, '0099_next', 7)"
    )
    newer = _warnings(redis_server.url, f"{base}?schema=future")
    assert len(newer) == 1 and "is for BullMQ 7 or newer" in newer[0]

    postgres_server.psql(
        "DROP ROLE IF EXISTS outsider; CREATE ROLE outsider LOGIN; "
        "REVOKE ALL ON SCHEMA bullmq FROM PUBLIC"
    )
    refused = _warnings(
        redis_server.url, f"postgresql://outsider@127.0.0.1:{postgres_server.port}/bullmq"
    )
    assert len(refused) == 1 and "refused a read of BullMQ's schema" in refused[0]
