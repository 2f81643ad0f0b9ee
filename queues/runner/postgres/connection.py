"""A worker's connection to a Postgres store: BullMQ's own (its LISTEN wait, its serialized
statements), checked instead of migrated, with errors left as psycopg raises them so the
package's worker tells a lost connection (retried) from a refusal.

:meth:`WorkerConnection.transaction` runs several of BullMQ's own calls as one transaction:
the final failure of a job and its dead-letter copy commit together or not at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from bullmq.backends.postgres_connection import PgResult, PostgresConnection

# The package's own rewriting of its ``$1`` placeholders for psycopg: the same statements,
# run on the transaction's connection.
from bullmq.backends.postgres_connection import _to_pyformat as to_pyformat

from queues.postgres.bullmq_queues import CheckedConnection
from queues.postgres.urls import PostgresUrl

# The connection of the transaction the current task is in (None: none).
_in_transaction: ContextVar[psycopg.AsyncConnection[Any] | None] = ContextVar(
    "bullpen_pg_transaction", default=None
)


class WorkerConnection(CheckedConnection):
    def __init__(self, url: PostgresUrl) -> None:
        super().__init__(url)

    async def run(self, sql: str, params: list[Any]) -> Any:
        conn = _in_transaction.get()
        if conn is None:
            return await PostgresConnection.run(self, sql, params)
        query, values = to_pyformat(sql, params)
        async with conn.cursor() as cursor:
            await cursor.execute(query, values)
            if cursor.description is None:
                return PgResult([], [], cursor.rowcount)
            columns = [column.name for column in cursor.description]
            return PgResult(columns, await cursor.fetchall(), cursor.rowcount)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """Calls made by this task inside the block share one transaction; other tasks'
        calls wait for it, as they wait for any statement on this connection."""
        await self.wait_until_ready()
        async with self._conn_lock:
            conn = await self._get_conn()
            token = _in_transaction.set(conn)
            try:
                async with conn.transaction():
                    yield
            finally:
                _in_transaction.reset(token)
