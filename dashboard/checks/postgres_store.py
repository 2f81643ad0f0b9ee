"""The deployment check that every PostgreSQL store answers and holds a BullMQ schema Bullpen
can read: what is wrong with one is said for it alone, the other connections are still used."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Warning, register

from dashboard.checks.mounting import TAG, usable_config
from queues.redis.urls import redact

_PROBE_TIMEOUT = 1  # seconds (libpq counts whole seconds): a check must not hold manage.py up


# Like the Redis check, only ``check --deploy`` opens a connection.
@register(TAG, deploy=True)
def check_postgres_stores(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if usable_config() is None:
        return []
    from queues.redis.connections import configured

    found: list[CheckMessage] = []
    for connection in configured():
        if not connection.is_postgres:
            continue
        wrong = _problem(connection.url)
        if wrong is not None:
            found.append(
                Warning(
                    f"The PostgreSQL store {connection.name!r} cannot be read: {wrong}",
                    hint="Its queues are left out of the pages until it can; the other "
                    "connections are shown. Bullpen never migrates BullMQ's schema itself.",
                    id="bullpen.W021",
                )
            )
    return found


def _problem(url: str) -> str | None:
    import psycopg
    from psycopg import errors as pg_errors

    from queues.postgres import schema
    from queues.postgres.urls import parse_postgres_url

    target = parse_postgres_url(url)
    try:
        with psycopg.connect(target.conninfo, connect_timeout=_PROBE_TIMEOUT) as conn:
            try:
                row = conn.execute(schema.state_sql(target)).fetchone()
            except pg_errors.UndefinedTable:
                return schema.problem(target, None)
            if row is None:
                return schema.problem(target, None)
            return schema.problem(target, schema.SchemaState(int(row[0]), int(row[1])))
    except pg_errors.InsufficientPrivilege as error:
        return f"{redact(url)} refused a read of BullMQ's schema: {_first_line(error)}"
    except psycopg.Error as error:
        return f"{redact(url)} is unreachable: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
