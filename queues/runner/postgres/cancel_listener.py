"""Hearing the dashboard's cancel requests on a PostgreSQL store: the runner LISTENs on the
store's ``bullpen_cancel`` channel (queues/actions/cancel_requests.py) on a session of its own
and hands each request for a queue it works to that queue's worker, which cancels the job if
it runs it (job_loop/cancels.py); other processes' workers, and other schemas' queues, ignore
it. A lost session is opened again after a pause; the dashboard asks again meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import psycopg

from queues.actions.cancel_requests import POSTGRES_CHANNEL, decode_for_store
from queues.cancelling import cancel_and_wait
from queues.postgres.urls import PostgresUrl
from queues.runner.job_loop.cancel_listener import CancelsJobs, hand_over
from queues.runner.json_logs import log_event

AFTER_ERROR_S = 1.0
CONNECT_TIMEOUT_S = 10


class PostgresCancelListener:
    def __init__(self, url: PostgresUrl, workers: Mapping[str, CancelsJobs]) -> None:
        """``workers``: the worker of each queue, by the queue's name."""
        self.url = url
        self.workers = dict(workers)
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._task: asyncio.Future[None] | None = None

    async def start(self) -> None:
        """LISTEN, and return once the store has it: a request sent after this is heard."""
        if not self.workers:
            return
        try:
            await self._listen_again()
        except (psycopg.Error, OSError) as error:
            log_event("error", error=f"cancel requests: {type(error).__name__}: {error}")
        self._task = asyncio.ensure_future(self._listen())

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        if self._conn is not None:
            await self._conn.close()

    async def _listen_again(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
        conn = await psycopg.AsyncConnection.connect(
            self.url.conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        )
        await conn.execute(f"LISTEN {POSTGRES_CHANNEL}")
        self._conn = conn

    async def _listen(self) -> None:
        while True:
            try:
                if self._conn is None:
                    await self._listen_again()
                assert self._conn is not None
                async for note in self._conn.notifies():
                    self.hear(note.payload)
            except (psycopg.Error, OSError) as error:
                log_event("error", error=f"cancel requests: {type(error).__name__}: {error}")
                if self._conn is not None:
                    await self._conn.close()
                    self._conn = None
                await asyncio.sleep(AFTER_ERROR_S)

    def hear(self, payload: str) -> bool:
        """Hand the request to its queue's worker; True when that worker cancelled the job."""
        found = decode_for_store(payload)
        if found is None:
            return False
        queue, schema, request = found
        worker = self.workers.get(queue)
        if worker is None or schema != self.url.schema:
            return False
        return hand_over(worker, request)
