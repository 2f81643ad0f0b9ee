"""Fixtures with real parts: a redis-server, the Node BullMQ peer, a daphne server, Chromium.

Tests marked ``unit`` (every test under tests/unit/, and pure tests elsewhere marked so) get
none of them: ``./run test-fast`` runs those alone, in seconds, on a machine without
redis-server, Node or Chromium."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from django.test import AsyncClient, override_settings
from playwright.async_api import Browser, Playwright, async_playwright, expect

from build_catalogs import compile_catalogs
from queues.actions import handles
from queues.cancelling import cancel_and_wait
from queues.failures import failure_groups
from queues.redis import clients
from tests.support import browser as browser_support
from tests.support import module_state
from tests.support.browser import (
    BROWSER_PARTS,
    SESSION_LOOP,
    BrowserServer,
    Driver,
    chromium,
    on_session_loop,
    on_the_tests_loop,
    shoot_open_pages,
)
from tests.support.paths import ROOT
from tests.support.peer import Peer, PostgresPeer
from tests.support.servers.cluster_topology import ClusterTopology
from tests.support.servers.live_server import (
    LiveServer,
    start_bullpen,
    stop_bullpen,
)
from tests.support.servers.postgres_server import PostgresServer, missing_reason
from tests.support.servers.redis_server import RedisServer
from tests.support.servers.sentinel_topology import SentinelTopology

pytest_plugins = ["tests.support.worker_fixtures"]

UNIT_DIR = ROOT / "tests" / "unit"
# Fixtures that start a real part; a unit test asking for one is in the wrong tier.
REAL_PARTS = (
    "redis_server",
    "redis_client",
    "peer",
    "bullpen_server",
    "bullpen_module_server",
    "chromium_path",
    "chromium_server",
    "playwright_driver",
    "browser",
    "sentinel_topology",
    "cluster_topology",
    "restricted_redis_url",
    "postgres_server",
    "postgres_url",
    "pg_peer",
)
# What a unit test's Bullpen points at: nothing listens there, so a stray read fails at once.
NO_REDIS = "redis://127.0.0.1:1/0"


def pytest_configure(config: pytest.Config) -> None:
    # What a page should come to show, it shows within a few seconds on a quiet machine; a
    # loaded one (other suites at once) can take longer. A passing test waits no longer for
    # this: only a failing one does.
    expect.set_options(timeout=15_000)
    # Pages read compiled translation catalogs; a fresh clone has only their sources (.po).
    compile_catalogs()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(UNIT_DIR):
            item.add_marker(pytest.mark.unit)
        wanted = getattr(item, "fixturenames", ())
        if pytest_asyncio.is_async_test(item) and any(name in wanted for name in BROWSER_PARTS):
            # First, so that it is the closest asyncio marker (the auto mode's has no scope).
            item.add_marker(SESSION_LOOP, append=False)


def fixtures_on_other_loops(item: pytest.Item) -> list[str]:
    """The async fixtures of a session-loop test that would run on a loop of their own: their
    Redis clients and tasks would outlive that loop, unclosed."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    found = []
    for name, definitions in info.name2fixturedefs.items():
        func = definitions[-1].func
        is_async = inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
        if is_async and getattr(func, "_loop_scope", None) != "session":
            found.append(name)
    return found


def pytest_runtest_setup(item: pytest.Item) -> None:
    if on_session_loop(item) and (elsewhere := fixtures_on_other_loops(item)):
        pytest.fail(
            f"a browser test runs on the session's event loop, its async fixtures {elsewhere} "
            "on loops of their own: give them loop_scope='session' (@pytest_asyncio.fixture), "
            "or a variant for each loop (on_the_tests_loop in tests/support/browser.py)"
        )
    if item.get_closest_marker("unit") is None:
        return
    wanted = [name for name in REAL_PARTS if name in getattr(item, "fixturenames", ())]
    if wanted:
        pytest.fail(f"a unit test runs without Redis, Node or Chromium; it asks for {wanted}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.when == "call" and report.failed:
        item.stash[FAILED] = True
    return report


FAILED = pytest.StashKey[bool]()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def durable_redis() -> Iterator[RedisServer]:
    """A redis-server of the test's own that writes every change to disk (appendonly): a
    restart keeps the queues, as a production Redis does."""
    server = RedisServer(appendonly=True)
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
def close_redis_clients(request: pytest.FixtureRequest) -> None:
    """What a test started on its event loop ends with it, on that loop."""
    on_the_tests_loop(request, "services")


async def close_loop_services(before: set[asyncio.Task[Any]]) -> None:
    # This loop's background services (started by an action, a request or a live page) stop
    # with the test.
    from dashboard.services import lifecycle

    await lifecycle.stop_services()
    # Then whatever else the test left running on the loop (a request's shared scan, a task
    # of its own), before the clients it may use are closed: ended after them (by the loop's
    # end, a loaded machine's turns later), it could open a connection on a closed client, which
    # nothing would close. Tasks the test found running stay (the session loop's driver).
    left = [
        task
        for task in asyncio.all_tasks() - before
        if task is not asyncio.current_task() and not browser_support.drives_playwright(task)
    ]
    await cancel_and_wait(*left)
    # The shared clients belong to the running event loop: close them with the test.
    await clients.close_current()
    await handles.close_current()


@pytest_asyncio.fixture(loop_scope="function")
async def services_on_test_loop() -> AsyncIterator[None]:
    before = asyncio.all_tasks()
    yield
    await close_loop_services(before)


@pytest_asyncio.fixture(loop_scope="session")
async def services_on_session_loop() -> AsyncIterator[None]:
    # The session's loop outlives the test: the tasks it left are ended, as closing a loop of
    # its own does. The driver's tasks stay: they serve the next test.
    before = asyncio.all_tasks()
    yield
    await close_loop_services(before)


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


@pytest.fixture
def peer(redis_server: RedisServer) -> Peer:
    if not (ROOT / "tests" / "interop" / "node_modules" / "bullmq").exists():
        pytest.fail("Node peer not installed: run ./run test (it runs npm ci in tests/interop)")
    return Peer(redis_server.url)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL 15 per test process (BullMQ 6's second store)."""
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of the test process's PostgreSQL, with BullMQ's tables emptied for this test."""
    postgres_server.empty()
    return postgres_server.url


@pytest.fixture
def pg_peer(postgres_url: str) -> PostgresPeer:
    """The Node BullMQ peer on the PostgreSQL store."""
    if not (ROOT / "tests" / "interop" / "node_modules" / "pg").exists():
        pytest.fail("Node peer not installed: run ./run test (it runs npm ci in tests/interop)")
    return PostgresPeer(postgres_url)


@pytest.fixture
def client() -> AsyncClient:
    return AsyncClient()


@pytest.fixture
def bullpen_server(
    request: pytest.FixtureRequest, redis_server: RedisServer, tmp_path: Path
) -> Iterator[LiveServer]:
    """Bullpen served by daphne: a fresh server per test, or, for a test marked
    ``shared_server`` (it only reads), the one server of its module."""
    if request.node.get_closest_marker("shared_server") is not None:
        yield request.getfixturevalue("bullpen_module_server")
        return
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", wait=False)
    yield server
    stop_bullpen(server, graceful=False)


@pytest.fixture(scope="module")
def bullpen_module_server(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """One daphne for a module's tests that only read: every test still starts on an empty
    Redis; the server reads it afresh on each page (no discovery cache in the tests)."""
    server = start_bullpen(redis_server.url, tmp_path_factory.mktemp("daphne") / "daphne.log")
    yield server
    stop_bullpen(server, graceful=False)


@pytest.fixture(scope="session")
def chromium_server() -> Iterator[BrowserServer]:
    """One Chromium for the whole test process; each test connects a browser of its own."""
    path = "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            "Debian chromium is missing: run ./run test as root, or apt-get install chromium"
        )
    server = BrowserServer(path)
    server.start()
    browser_support.shared = server
    yield server
    browser_support.shared = None
    server.stop()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def playwright_driver(chromium_server: BrowserServer) -> AsyncIterator[Playwright]:
    """One Playwright driver for the whole test process, on the session's event loop."""
    async with async_playwright() as pw:
        browser_support.driver = Driver(pw, asyncio.get_running_loop())
        yield pw
        browser_support.driver = None


@pytest.fixture
def chromium_path(chromium_server: BrowserServer, playwright_driver: Playwright) -> str:
    return chromium_server.executable_path


@pytest_asyncio.fixture(loop_scope="session")
async def browser(request: pytest.FixtureRequest, chromium_path: str) -> AsyncIterator[Browser]:
    """This test's own browser (its contexts and pages closed after it) on the shared Chromium;
    when the test fails, its open pages are saved as screenshots."""
    async with chromium(chromium_path) as connected:
        yield connected
        if request.node.stash.get(FAILED, False):
            await shoot_open_pages(connected)
