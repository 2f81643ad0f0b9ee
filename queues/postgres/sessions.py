"""One PostgreSQL session per store and event loop, its BullMQ schema checked when it opens.

Statements are BullMQ's own (the ``commands/*.sql`` of the Python ``bullmq`` package) with the
session's ``search_path`` pinned to the store's schema, as BullMQ's backends do; a session runs
one statement at a time. Failures become :class:`StoreUnavailable` with a reason a person can
act on: unreachable, refused, or a schema Bullpen cannot read.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from bullmq.backends.postgres_connection import _to_pyformat
from bullmq.postgres import sql_loader
from psycopg import errors as pg_errors

from queues.config.settings import get_config, on_change
from queues.errors import StoreUnavailable
from queues.postgres import schema
from queues.postgres.urls import PostgresUrl, parse_postgres_url
from queues.redis import connections
from queues.redis.urls import redact


class Session:
    """The store's session on one event loop (opened on first use, again after a failure)."""

    def __init__(self, name: str, url: PostgresUrl) -> None:
        self.name = name
        self.url = url
        self.conn: psycopg.AsyncConnection[Any] | None = None
        self.lock = asyncio.Lock()

    async def command(self, name: str, params: list[Any]) -> list[dict[str, Any]]:
        """Rows of BullMQ's named command (``get_counts``, ``get_range``...)."""
        return (await self.commands([(name, params)]))[0]

    async def commands(self, calls: list[tuple[str, list[Any]]]) -> list[list[dict[str, Any]]]:
        """Rows of several of BullMQ's commands, sent together (one round trip)."""
        return await self.queries(
            [_to_pyformat(sql_loader.load_command(name), params) for name, params in calls]
        )

    async def query(
        self, sql: str, params: list[Any] | tuple[Any, ...] = ()
    ) -> list[dict[str, Any]]:
        return (await self.queries([(sql, list(params))]))[0]

    async def queries(self, statements: list[tuple[str, list[Any]]]) -> list[list[dict[str, Any]]]:
        if not statements:
            return []
        async with self.lock:
            try:
                conn = await self._open()
                if len(statements) == 1:
                    return [await _rows(await conn.execute(*statements[0]))]
                # Pipeline mode: every statement is sent before the first answer is awaited.
                async with conn.pipeline():
                    cursors = [await conn.execute(sql, params) for sql, params in statements]
                return [await _rows(cursor) for cursor in cursors]
            except psycopg.Error as error:
                await self._drop()
                raise StoreUnavailable(self._reason(error)) from error

    async def _open(self) -> psycopg.AsyncConnection[Any]:
        if self.conn is not None and not self.conn.closed:
            return self.conn
        timeout = max(1, round(float(get_config()["REDIS_TIMEOUT"])))
        conn = await psycopg.AsyncConnection.connect(
            self.url.conninfo,
            autocommit=True,
            connect_timeout=timeout,
            options=f"-c search_path={self.url.quoted_schema}",
        )
        try:
            await check_schema(conn, self.url)
        except BaseException:
            await conn.close()
            raise
        self.conn = conn
        return conn

    async def _drop(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None and not conn.closed:
            await conn.close()

    def _reason(self, error: psycopg.Error) -> str:
        return unreachable_reason(self.url, error)

    async def close(self) -> None:
        await self._drop()


async def check_schema(conn: psycopg.AsyncConnection[Any], url: PostgresUrl) -> None:
    try:
        async with conn.cursor() as cursor:
            await cursor.execute(schema.state_sql(url))
            row = await cursor.fetchone()
        state = schema.SchemaState(int(row[0]), int(row[1])) if row else None
    except pg_errors.UndefinedTable:
        state = None
    found = schema.problem(url, state)
    if found is not None:
        raise StoreUnavailable(f"PostgreSQL at {redact(url.conninfo)}: {found}")


def unreachable_reason(url: PostgresUrl, error: psycopg.Error) -> str:
    """Why the store could not be used, in words a person can act on."""
    where = f"PostgreSQL at {redact(url.conninfo)}"
    if isinstance(error, psycopg.OperationalError) and error.sqlstate is None:
        return f"{where} is unreachable: {_first_line(error)}"
    if isinstance(error, pg_errors.InsufficientPrivilege):
        return f"{where} refused BullMQ's schema to Bullpen: {_first_line(error)}"
    if isinstance(error, pg_errors.UndefinedTable | pg_errors.UndefinedFunction):
        return (
            f"{where}: BullMQ's schema {url.schema!r} lacks what Bullpen uses "
            f"({_first_line(error)}); run BullMQ's migrations"
        )
    return f"{where} answered with an error: {_first_line(error)}"


async def _rows(cursor: psycopg.AsyncCursor[Any]) -> list[dict[str, Any]]:
    if cursor.description is None:
        return []
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in await cursor.fetchall()]


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


_sessions: dict[asyncio.AbstractEventLoop, dict[str, Session]] = {}
_retired: list[tuple[asyncio.AbstractEventLoop, Session]] = []


def session(name: str) -> Session:
    """The running loop's session of PostgreSQL connection ``name``."""
    mine = _sessions.setdefault(asyncio.get_running_loop(), {})
    found = mine.get(name)
    if found is None:
        found = Session(name, parse_postgres_url(connections.url_of(name)))
        mine[name] = found
    return found


@on_change
def reset() -> None:
    _retired.extend((loop, each) for loop, mine in _sessions.items() for each in mine.values())
    _sessions.clear()


async def close_current() -> None:
    """Close the running loop's sessions (tests and commands that end their loop)."""
    loop = asyncio.get_running_loop()
    mine = [each for owner, each in _retired if owner is loop]
    _retired[:] = [(owner, each) for owner, each in _retired if owner is not loop]
    for each in [*mine, *_sessions.pop(loop, {}).values()]:
        await each.close()
