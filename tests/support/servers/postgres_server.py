"""A real PostgreSQL 15 (Debian's) on a free port, for the tests of BullMQ's Postgres store.

Debian's server refuses to run as root, so the data directory belongs to the ``postgres``
user and every server binary runs as that user through ``runuser``. Connections use the
``bullpen`` superuser over TCP on 127.0.0.1 with trust authentication (a test machine only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.servers.redis_server import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
USER = "bullpen"
DATABASE = "bullmq"


def missing_reason() -> str | None:
    """Why a PostgreSQL server cannot be started here, or None when it can."""
    if not (BIN / "postgres").exists():
        return (
            "PostgreSQL 15 is not installed: run ./run test (it installs Debian's postgresql "
            "as root) or apt-get install postgresql"
        )
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "runuser is missing: PostgreSQL cannot run as root without it"
    return None


def _as_postgres(argv: list[str]) -> list[str]:
    # The server refuses root; any other user runs it as itself.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


class PostgresServer:
    """``postgres`` on a free port with one database, ``bullmq``; ``stop()`` ends it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="bullpen-pg-"))
        self.data = self.dir / "data"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run([str(BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", USER])
        self.process = subprocess.Popen(
            _as_postgres(
                [
                    str(BIN / "postgres"),
                    "-D",
                    str(self.data),
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.dir),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    # A test server: durability buys nothing and costs every commit a flush.
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                ]
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wait_ready()
        self.psql(f"CREATE DATABASE {DATABASE}", database="postgres")

    def _run(self, argv: list[str]) -> None:
        result = subprocess.run(_as_postgres(argv), capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {result.stderr[-1000:]}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            probe = subprocess.run(
                [str(BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-q"],
                check=False,
            )
            if probe.returncode == 0:
                return
            assert self.process is not None
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"postgres did not start on port {self.port}")
            time.sleep(0.05)

    def psql(self, sql: str, *, database: str = DATABASE) -> str:
        """Run SQL as the superuser; returns psql's unaligned, tuples-only output."""
        result = subprocess.run(
            [
                str(BIN / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                USER,
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {result.stderr[-1000:]}")
        return result.stdout

    def empty(self) -> None:
        """Every table of BullMQ's default schema (``bullmq``) emptied, its migrations kept:
        each test starts on no queues without paying for BullMQ's schema again."""
        tables = self.psql(
            "SELECT string_agg(format('%I.%I', schemaname, tablename), ', ') FROM pg_tables "
            "WHERE schemaname = 'bullmq' AND tablename <> 'migration'"
        ).strip()
        if tables:
            self.psql(f"TRUNCATE {tables} CASCADE")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None
        shutil.rmtree(self.dir, ignore_errors=True)
