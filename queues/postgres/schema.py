"""Whether a database holds a BullMQ schema Bullpen can read, judged without changing it.

BullMQ records each applied migration in ``<schema>.migration``; Node's BullMQ also records the
lowest BullMQ major version that may use the schema (``min_client_version``). Bullpen reads
through the SQL of the Python ``bullmq`` it pins, so it needs every migration that package
ships, and refuses a schema meant for a newer BullMQ major. It never migrates: that is the
application's BullMQ's job.
"""

from __future__ import annotations

from dataclasses import dataclass

from bullmq.postgres import sql_loader

from queues.postgres.urls import PostgresUrl

# The BullMQ major version whose schema Bullpen reads (npm bullmq 6, PyPI bullmq 3.x).
UNDERSTOOD_MAJOR = 6


def lowest_version() -> int:
    """The newest migration the pinned Python ``bullmq`` ships: its SQL needs them all."""
    return max(int(name.split("_", 1)[0]) for name in sql_loader.migration_files())


def state_sql(url: PostgresUrl) -> str:
    # to_jsonb(): the column is absent from schemas migrated by the Python package alone. The
    # schema is a plain name, validated when the URL was read.
    columns = (
        "COALESCE(MAX(version), 0)::int, "
        "COALESCE(MAX((to_jsonb(m) ->> 'min_client_version')::int), 0)::int"
    )
    return " ".join(("SELECT", columns, "FROM", f"{url.quoted_schema}.migration AS m"))


@dataclass(frozen=True)
class SchemaState:
    version: int
    min_client_version: int


def problem(url: PostgresUrl, state: SchemaState | None) -> str | None:
    """What keeps Bullpen from reading the schema, or None. ``state`` None: no migration table."""
    migrate = "run BullMQ's migrations (Node: `migrate: true` on the connection, once)"
    if state is None or state.version == 0:
        return f"BullMQ's schema {url.schema!r} is missing from the database: {migrate}"
    if state.min_client_version > UNDERSTOOD_MAJOR:
        return (
            f"BullMQ's schema {url.schema!r} is for BullMQ {state.min_client_version} or newer; "
            f"Bullpen reads the schema of BullMQ {UNDERSTOOD_MAJOR}"
        )
    if state.version < lowest_version():
        return (
            f"BullMQ's schema {url.schema!r} is at migration {state.version}; Bullpen needs "
            f"{lowest_version()} or later: {migrate}"
        )
    return None
