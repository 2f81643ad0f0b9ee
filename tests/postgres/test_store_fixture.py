"""The PostgreSQL fixture and the Node peer on BullMQ's Postgres store: what the other tests
of Bullpen on Postgres stand on."""

from __future__ import annotations

from tests.support.peer import PostgresPeer
from tests.support.servers.postgres_server import PostgresServer


def test_peer_writes_and_reads_a_queue_in_postgres(
    pg_peer: PostgresPeer, postgres_server: PostgresServer
) -> None:
    built = pg_peer("scenario", "--queue", "mail")
    seen = pg_peer("inspect", "--queue", "mail", "--ids", "charge-9")

    assert seen["counts"] == {
        "active": 1,
        "completed": 2,
        "delayed": 2,
        "failed": 2,
        "prioritized": 3,
        "waiting": 4,
        "waiting-children": 1,
    }
    assert sorted(seen["jobs"]["failed"]) == sorted(built["ids"]["failed"])
    assert seen["details"]["charge-9"]["failedReason"] == "card declined: 0000"
    # The jobs are rows of BullMQ's own schema, not Redis keys.
    rows = postgres_server.psql("SELECT count(*) FROM bullmq.job WHERE queue = 'mail'")
    assert int(rows) == 15


def test_each_test_starts_on_an_empty_store(
    pg_peer: PostgresPeer, postgres_server: PostgresServer
) -> None:
    pg_peer("add", "--queue", "mail", "--name", "hello", "--data", '{"n": 1}')
    # Whatever an earlier test left (the scenario's fifteen jobs) is gone.
    assert postgres_server.psql("SELECT count(*) FROM bullmq.job").strip() == "1"
