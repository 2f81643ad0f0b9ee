"""Helpers that several test modules share.

Moved here from ``tests.conftest``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.servers.redis_server import free_port
from tests.support.servers.server_forks import ForkedProcess, fork_daphne, fork_manage


class LiveServer:
    def __init__(
        self, url: str, process: ForkedProcess, log: Path, port: int | None = None
    ) -> None:
        """``port``: still to be waited for, as the URL is first asked for (None: listening)."""
        self._url = url
        self._port = port
        self.process = process
        self.log = log

    @property
    def url(self) -> str:
        """The server's URL, once it listens: a test's fixtures and its first steps (a
        browser connecting, jobs added) run while daphne starts."""
        if self._port is not None:
            _wait_for_port(self._port, self.process, self.log)
            self._port = None
        return self._url


# A migrated database per settings module, made once per test process and copied for every
# server: running `migrate` for each server cost seconds of CPU per browser test.
_MIGRATED: dict[str, Path] = {}


def database_variable(env: dict[str, str]) -> str:
    """The variable naming the server's database: the standalone site reads BULLPEN_DB."""
    return "BULLPEN_DB" if "BULLPEN_DB" in env else "BULLPEN_TEST_DB"


def migrated_database(env: dict[str, str]) -> Path:
    settings = env["DJANGO_SETTINGS_MODULE"]
    if settings not in _MIGRATED:
        folder = Path(tempfile.mkdtemp(prefix="bullpen-migrated-"))
        template = folder / "template.sqlite3"
        # Forked as the servers are: a fresh interpreter imported Django and Bullpen first.
        log = folder / "migrate.log"
        command = fork_manage(
            ["migrate", "--no-input", "-v", "0", "--skip-checks"],
            {**env, database_variable(env): str(template)},
            ROOT,
            log,
        )
        assert command.wait(timeout=120) == 0, log.read_text()
        _MIGRATED[settings] = template
    return _MIGRATED[settings]


# Seconds a test server gives a websocket to be accepted (daphne's default, kept in production,
# is 5): on a loaded machine a page's socket waited longer than that for its consumer to
# connect, and daphne refused it.
HANDSHAKE_LIMIT_S = 60


def start_bullpen(
    redis_url: str,
    log: Path,
    extra_env: dict[str, str] | None = None,
    *,
    wait: bool = True,
    port: int | None = None,
) -> LiveServer:
    """Bullpen served by daphne, as in production, against ``redis_url``; listening when
    this returns, or, without ``wait``, once its URL is first asked for. ``port``: a stopped
    server's, to start it again where its pages reconnect (default: a free one)."""
    port = port or free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "BULLPEN_TEST_REDIS_URL": redis_url,
        "BULLPEN_TEST_DB": str(log.with_suffix(".sqlite3")),
        # The checkout first; a caller's own path (packages installed beside the virtualenv)
        # after it.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        **(extra_env or {}),
    }
    # The server writes the audit log: give it a database of its own, migrated. A server
    # started again on the same database (a restart) keeps what the last one wrote.
    database = Path(env[database_variable(env)])
    if not database.exists():
        shutil.copyfile(migrated_database(env), database)
    log.write_bytes(b"")
    argv = [
        *("-b", "127.0.0.1", "-p", str(port)),
        *("--websocket_connect_timeout", str(HANDSHAKE_LIMIT_S)),
        "bullpen_site.asgi:application",
    ]
    process = fork_daphne(argv, env, ROOT, log)
    if not wait:
        return LiveServer(f"http://127.0.0.1:{port}", process, log, port)
    server = LiveServer(f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_for_port(port, process, log)
    except BaseException:
        stop_bullpen(server)  # a server that never listened must not outlive the test run
        raise
    return server


# Seconds daphne gets to stop after SIGTERM. On a loaded machine a server whose page still
# holds a socket took 10 s and more to end its application instances; a test's throw-away
# server is then killed (its Redis and database are the test's own).
STOP_GRACE_S = 4


def stop_bullpen(server: LiveServer, *, graceful: bool = True) -> None:
    """Stop the server as a deployment does (SIGTERM), or, not ``graceful``, kill it: a
    fixture's throw-away server, whose Redis and database go with the test (its graceful stop
    took seconds on a loaded machine, and is tested where it matters)."""
    if server.process.poll() is None:
        if not graceful:
            server.process.kill()
            server.process.wait(10)
            return
        server.process.terminate()
        try:
            server.process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(10)


STARTUP_LIMIT_S = 120


def _wait_for_port(port: int, process: ForkedProcess, log: Path) -> None:
    import socket

    # A poll, so a generous bound costs nothing when daphne is quick; on a machine loaded by
    # other test runs, its start took more than 30 s.
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited: {log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"daphne did not listen on {port}: {log.read_text()[-2000:]}")


def http_get(url: str, *, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """GET through a real socket; HTTP errors are returned, not raised."""
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - local test server
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
