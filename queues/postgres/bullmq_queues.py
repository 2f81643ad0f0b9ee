"""bullmq ``Queue`` objects on a Postgres store, for actions: BullMQ's own Postgres backend
(the Python package's ``PostgresBackend`` and its SQL functions) does every change.

The package's connection migrates the schema when it first connects; Bullpen never does, so
its connection here checks the schema instead (queues/postgres/schema.py) and refuses one it
cannot use. Failures to reach the database become :class:`StoreUnavailable`; BullMQ's own
refusals (a job in another state, a missing job) pass through as the package raises them.
One connection per store and event loop, shared by that store's queues.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from bullmq import Queue
from bullmq.backends.postgres_backend import PostgresBackend
from bullmq.backends.postgres_connection import PostgresConnection

from queues.config.settings import get_config, on_change
from queues.errors import StoreUnavailable
from queues.postgres.sessions import check_schema, unreachable_reason
from queues.postgres.urls import PostgresUrl, parse_postgres_url
from queues.reads.keys import QueueRef
from queues.redis import connections

# The SQLSTATE BullMQ's SQL functions raise their refusals with.
BULLMQ_REFUSAL = "BM001"


class CheckedConnection(PostgresConnection):  # type: ignore[misc]
    """BullMQ's Postgres connection, made ready by a schema check instead of a migration."""

    def __init__(self, url: PostgresUrl) -> None:
        super().__init__({"connection": url.conninfo, "schema": url.schema})
        self.url = url
        self.checked = False

    async def wait_until_ready(self) -> None:
        if self.checked:
            return
        async with self._ready_lock:
            if self.checked:
                return
            timeout = max(1, round(float(get_config()["REDIS_TIMEOUT"])))
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True, connect_timeout=timeout
                )
            except psycopg.Error as error:
                raise StoreUnavailable(unreachable_reason(self.url, error)) from error
            try:
                await check_schema(conn, self.url)
            finally:
                await conn.close()
            self.checked = True
            self._ready = True  # what the package's run() looks at

    async def run(self, sql: str, params: list[Any]) -> Any:
        try:
            return await super().run(sql, params)
        except psycopg.Error as error:
            if error.sqlstate == BULLMQ_REFUSAL:
                raise  # the backend names the refusal (PostgresBackend._run)
            self._conn = None  # reconnect on the next action
            raise StoreUnavailable(unreachable_reason(self.url, error)) from error


_connections: dict[asyncio.AbstractEventLoop, dict[str, CheckedConnection]] = {}
_retired: list[tuple[asyncio.AbstractEventLoop, CheckedConnection]] = []


def postgres_queue(ref: QueueRef) -> Queue:
    """A bullmq Queue for ``ref`` on this loop's connection to its store."""
    mine = _connections.setdefault(asyncio.get_running_loop(), {})
    connection = mine.get(ref.connection)
    if connection is None:
        url = parse_postgres_url(connections.url_of(ref.connection))
        connection = mine[ref.connection] = CheckedConnection(url)
    queue = Queue(ref.name, {"backend": "postgres", "schema": connection.schema})
    # The package's own backend, on the shared, checked connection (the one the Queue made
    # for itself is never opened).
    queue.backend = PostgresBackend(ref.name, connection, owns_connection=False)
    return queue


@on_change
def reset() -> None:
    _retired.extend((loop, each) for loop, mine in _connections.items() for each in mine.values())
    _connections.clear()


async def close_current() -> None:
    loop = asyncio.get_running_loop()
    mine = [each for owner, each in _retired if owner is loop]
    _retired[:] = [(owner, each) for owner, each in _retired if owner is not loop]
    for each in [*mine, *_connections.pop(loop, {}).values()]:
        await each.close()
