"""A ``postgresql://`` URL as a store: how it is read, which connection keeps Bullpen's own
state, what the checks say about it, and how a BullMQ schema's version is judged."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from dashboard.checks import mounting
from queues.postgres import schema
from queues.postgres.urls import PostgresUrlError, is_postgres_url, parse_postgres_url
from queues.redis import connections
from queues.redis.urls import redact
from queues.runner import Registry, RunnerConfigError, TenantLimit
from queues.runner.postgres.supervisor import PostgresWorkerRunner

PG = "postgresql://app:s3cret@db.internal:5432/jobs"


def test_a_postgres_url_names_its_database_and_bullmq_schema() -> None:
    assert is_postgres_url(PG) and is_postgres_url("postgres://db/jobs")
    assert not is_postgres_url("redis://db:6379/0") and not is_postgres_url(None)
    plain = parse_postgres_url(PG)
    assert (plain.conninfo, plain.schema) == (PG, "bullmq")
    chosen = parse_postgres_url(f"{PG}?schema=tenant_1&sslmode=require")
    # The schema is BullMQ's option; libpq gets every other option as given.
    assert chosen.schema == "tenant_1" and chosen.quoted_schema == '"tenant_1"'
    assert chosen.conninfo == f"{PG}?sslmode=require"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://db:5432/", "names no database"),
        ("postgresql:///jobs", "names no host"),
        ("postgresql://db:99999/jobs", "port"),
        ("postgresql://db/jobs?schema=x;drop", "not a plain name"),
        ("postgresql://db/jobs?schema=1abc", "not a plain name"),
    ],
)
def test_an_unusable_postgres_url_says_why(url: str, why: str) -> None:
    with pytest.raises(PostgresUrlError, match=why):
        parse_postgres_url(url)


def test_a_password_in_a_postgres_url_is_never_shown() -> None:
    assert "s3cret" not in redact(PG)
    assert "pw" not in redact("postgresql://db/jobs?user=app&password=pw")


def _checks(config: dict[str, object]) -> list[str]:
    with override_settings(BULLPEN=config):
        return [f"{m.id} {m.msg}" for m in mounting.check_settings()]


def test_postgres_urls_are_accepted_where_a_connection_url_is() -> None:
    config = {"CONNECTIONS": {"state": "redis://r:6379/0", "pg": {"URL": PG}}}
    assert _checks(config) == []
    with override_settings(BULLPEN=config):
        assert connections.names() == ["state", "pg"]
        assert connections.postgres_names() == ["pg"] and connections.redis_names() == ["state"]
    bad = _checks({"CONNECTIONS": {"state": "redis://r:6379/0", "pg": "postgresql://db/"}})
    assert len(bad) == 1 and "bullpen.E014" in bad[0] and "'pg'" in bad[0]
    assert "names no database" in bad[0]


def test_bullpens_own_state_stays_on_the_first_redis_connection() -> None:
    config = {"CONNECTIONS": {"pg": PG, "state": "redis://r:6379/0"}}
    with override_settings(BULLPEN=config):
        assert connections.default_name() == "pg"
        assert connections.state_name() == "state"
        assert connections.url_of(None) == "redis://r:6379/0"


def test_a_postgres_store_without_any_redis_is_accepted_with_what_is_off() -> None:
    alone = _checks({"REDIS_URL": PG})
    assert len(alone) == 1 and alone[0].startswith("bullpen.W022")
    assert "without a Redis connection these are off" in alone[0]
    for feature in ("alerts", "history", "failure groups", "bulk actions"):
        assert feature in alone[0], feature
    assert "Cancel" not in alone[0]
    only = _checks({"CONNECTIONS": {"a": PG, "b": "postgres://other/jobs"}})
    assert [line[:12] for line in only] == ["bullpen.W022"]
    with override_settings(BULLPEN={"CONNECTIONS": {"a": PG}}):
        assert not connections.state_on_redis()
    mixed = {"CONNECTIONS": {"a": PG, "r": "redis://r:6379/0"}}
    assert _checks(mixed) == []
    with override_settings(BULLPEN=mixed):
        assert connections.state_on_redis()


def test_a_schema_is_judged_by_its_migrations_and_the_bullmq_major_it_needs() -> None:
    url = parse_postgres_url(PG)
    newest = schema.lowest_version()
    assert newest >= 4  # the Python bullmq 3.4.4 ships four
    assert schema.problem(url, schema.SchemaState(newest, 6)) is None
    # Node's BullMQ 6.7 is further along, with migrations its own major can still read.
    assert schema.problem(url, schema.SchemaState(11, 6)) is None
    # A schema migrated by the Python package alone records no client version.
    assert schema.problem(url, schema.SchemaState(newest, 0)) is None
    missing = schema.problem(url, None)
    assert missing is not None and "missing" in missing and "migrations" in missing
    older = schema.problem(url, schema.SchemaState(2, 6))
    assert older is not None and f"needs {newest} or later" in older
    newer = schema.problem(url, schema.SchemaState(14, 7))
    assert newer is not None and "BullMQ 7 or newer" in newer


async def _noop(payload: dict[str, Any]) -> None:
    return None


def test_the_worker_runner_on_a_postgres_store_refuses_what_needs_redis() -> None:
    registry = Registry()
    registry.register("fair", _noop, per_tenant=TenantLimit(max=5, duration_ms=1000))
    registry.register("plain", _noop)
    config = {"CONNECTIONS": {"state": "redis://r:6379/0", "pg": PG}}
    with override_settings(BULLPEN=config):
        with pytest.raises(RunnerConfigError, match=r"'pg' is a PostgreSQL .*\(queues fair\)$"):
            PostgresWorkerRunner(registry, connection="pg")
        runner = PostgresWorkerRunner(registry, ["plain"], connection="pg")
    assert [spec.queue for spec in runner.specs] == ["plain"]
    assert runner.url.schema == "bullmq" and runner.dead_letter.connection == "pg"
    bad = {"CONNECTIONS": {"state": "redis://r:6379/0", "pg": "postgresql://db/"}}
    with override_settings(BULLPEN=bad), pytest.raises(PostgresUrlError, match="names no database"):
        PostgresWorkerRunner(registry, ["plain"], connection="pg")


def test_the_standalone_sites_redis_urls_take_a_postgres_store() -> None:
    from bullpen_site.env_connections import connections as parse_store_urls

    named = parse_store_urls(f"main=redis://r:6379/0 pg={PG}?schema=jobs")
    assert named == {"main": {"URL": "redis://r:6379/0"}, "pg": {"URL": f"{PG}?schema=jobs"}}
    assert _checks({"CONNECTIONS": named}) == []


async def test_actions_a_postgres_store_does_not_do_yet_are_refused_first() -> None:
    from django.test import RequestFactory

    from dashboard.auth import mutation_steps as steps

    def attempt(queue: str, action: str) -> steps.Attempt:
        request = RequestFactory().post(f"/queues/api/queues/{queue}/{action}/")
        return steps.Attempt(request, action, {"queue": queue})

    config = {"CONNECTIONS": {"main": "redis://r:6379/0", "pg": PG}}
    with override_settings(BULLPEN=config):
        refusal = await steps.check_store(attempt("shop@pg", "move-to-wait"))
        assert refusal is not None and refusal.status == 400
        assert refusal.message == (
            "move-to-wait is not available yet for 'shop@pg': a queue on a PostgreSQL store"
        )
        for action in ("rate-limit", "concurrency", "move-to-failed"):
            assert await steps.check_store(attempt("shop@pg", action)) is not None, action
        allowed = (
            "retry-all",
            "empty",
            "obliterate",
            "upsert-scheduler",
            "run-scheduler",
            "cancel",
        )
        for action in (*allowed, "remove-scheduler"):
            assert await steps.check_store(attempt("shop@pg", action)) is None, action
        assert await steps.check_store(attempt("shop@main", "cancel")) is None
