"""Fixtures with real parts: a redis-server, the Node BullMQ peer, a daphne server, Chromium.

Tests marked ``unit`` (every test under tests/unit/, and pure tests elsewhere marked so) get
none of them: ``./run test-fast`` runs those alone, in seconds, on a machine without
redis-server, Node or Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from build_catalogs import compile_catalogs
from queues import connection, failure_groups
from queues.actions import handles
from tests import module_state
from tests.cluster_topology import ClusterTopology
from tests.redis_server import RedisServer, free_port
from tests.sentinel_topology import SentinelTopology

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / "tests" / "interop" / "peer.mjs"
UNIT_DIR = ROOT / "tests" / "unit"
# Fixtures that start a real part; a unit test asking for one is in the wrong tier.
REAL_PARTS = (
    "redis_server",
    "redis_client",
    "peer",
    "bullpen_server",
    "chromium_path",
    "sentinel_topology",
    "cluster_topology",
    "restricted_redis_url",
)
# What a unit test's Bullpen points at: nothing listens there, so a stray read fails at once.
NO_REDIS = "redis://127.0.0.1:1/0"


def pytest_configure(config: pytest.Config) -> None:
    # Pages read compiled translation catalogs; a fresh clone has only their sources (.po).
    compile_catalogs()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(UNIT_DIR):
            item.add_marker(pytest.mark.unit)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("unit") is None:
        return
    wanted = [name for name in REAL_PARTS if name in getattr(item, "fixturenames", ())]
    if wanted:
        pytest.fail(f"a unit test runs without Redis, Node or Chromium; it asks for {wanted}")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def bullpen_settings(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Every test but a unit test gets an empty Redis and Bullpen pointed at it."""
    if request.node.get_closest_marker("unit") is not None:
        url = NO_REDIS
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        if server.process is None:
            server.start()
        with server.client() as client:
            client.flushall()
        url = server.url
    failure_groups.reset_shared()
    config = {
        "REDIS_URL": url,
        "PREFIXES": ["bull"],
        "DISCOVERY_INTERVAL": 0,
        "READ_ACCESS": "dashboard.access.anyone",
        "BASIC_AUTH_PLAIN": {"operator": "s3cret-pass"},
    }
    with override_settings(BULLPEN=config):
        yield config


@pytest.fixture(autouse=True)
def fresh_module_state() -> Iterator[None]:
    """What one test leaves in a module's memory is not there for the next."""
    yield
    module_state.reset()


@pytest.fixture(autouse=True)
async def close_redis_clients() -> AsyncIterator[None]:
    yield
    # This loop's bulk-action runner (started by an action or a live page) stops with it.
    from dashboard import background

    await background.stop()
    # The shared clients belong to this test's event loop: close them with the loop.
    await connection.close_current()
    await handles.close_current()


@pytest.fixture(scope="module")
def cluster_topology() -> Iterator[ClusterTopology]:
    """Three masters of a Redis Cluster of their own, shared by one test module."""
    topology = ClusterTopology()
    try:
        topology.start()
        yield topology
    finally:
        topology.stop()


@pytest.fixture
def sentinel_topology() -> Iterator[SentinelTopology]:
    """A master, its replica and one sentinel of their own (a failover test ends the master)."""
    topology = SentinelTopology()
    try:
        topology.start()
        yield topology
    finally:
        topology.stop()


# A user of the test server without CLIENT, CONFIG and INFO, as hosted Redis services give.
RESTRICTED_USER = ("limited", "limited-pw")


@pytest.fixture
def restricted_redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The URL of the test server as that user (created for the test, deleted after it)."""
    user, password = RESTRICTED_USER
    rules = ["on", f">{password}", "~*", "&*", "+@all", "-client", "-config", "-info"]
    with redis_server.client() as admin:
        admin.execute_command("ACL", "SETUSER", user, "reset", *rules)
        try:
            yield f"redis://{user}:{password}@127.0.0.1:{redis_server.port}/0"
        finally:
            admin.execute_command("ACL", "DELUSER", user)


@pytest.fixture
def redis_client(redis_server: RedisServer) -> Iterator[Any]:
    with redis_server.client() as client:
        yield client


class Peer:
    """The Node.js BullMQ peer (tests/interop/peer.mjs)."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url

    def connection_flags(self) -> list[str]:
        """How the peer reaches Redis (a URL here; through a sentinel in test_sentinel.py)."""
        return ["--redis", self.redis_url]

    def __call__(self, command: str, *args: str, timeout: float = 60) -> Any:
        result = subprocess.run(
            ["node", str(PEER), command, *self.connection_flags(), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"peer {command} failed: {result.stderr[-2000:]}")
        return json.loads(result.stdout)


@pytest.fixture
def peer(redis_server: RedisServer) -> Peer:
    if not (ROOT / "tests" / "interop" / "node_modules" / "bullmq").exists():
        pytest.fail("Node peer not installed: run ./run test (it runs npm ci in tests/interop)")
    return Peer(redis_server.url)


@pytest.fixture
def client() -> AsyncClient:
    return AsyncClient()


class LiveServer:
    def __init__(self, url: str, process: subprocess.Popen[bytes], log: Path) -> None:
        self.url = url
        self.process = process
        self.log = log


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
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0", "--skip-checks"],
            cwd=ROOT,
            env={**env, database_variable(env): str(template)},
            check=True,
            timeout=120,
        )
        _MIGRATED[settings] = template
    return _MIGRATED[settings]


def start_bullpen(redis_url: str, log: Path, extra_env: dict[str, str] | None = None) -> LiveServer:
    """Bullpen served by daphne, as in production, against ``redis_url``."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "BULLPEN_TEST_REDIS_URL": redis_url,
        "BULLPEN_TEST_DB": str(log.with_suffix(".sqlite3")),
        "PYTHONPATH": str(ROOT),
        **(extra_env or {}),
    }
    # The server writes the audit log: give it a database of its own, migrated.
    shutil.copyfile(migrated_database(env), env[database_variable(env)])
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "bullpen_site.asgi:application",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    _wait_for_port(port, process, log)
    return LiveServer(f"http://127.0.0.1:{port}", process, log)


def stop_bullpen(server: LiveServer) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(10)


@pytest.fixture
def bullpen_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log")
    yield server
    stop_bullpen(server)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    import socket

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited: {log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"daphne did not listen on {port}: {log.read_text()[-2000:]}")


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture
def chromium_path() -> str:
    path = "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            "Debian chromium is missing: run ./run test as root, or apt-get install chromium"
        )
    return path


def http_get(url: str, *, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """GET through a real socket; HTTP errors are returned, not raised."""
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - local test server
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
