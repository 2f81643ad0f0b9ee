"""One Chromium and one Playwright driver per test process, a connection of its own per test.

Launching Chromium cost every browser test a second or more of CPU on a loaded machine. The
session starts one Chromium behind Playwright's browser server (``launch-server``); each test
connects to it and gets a ``Browser`` of its own: the contexts and pages it makes are its alone
(cookies, storage, viewport), and closing it closes them and leaves Chromium running for the
next test. The driver that connects is started once per process too (``driver``): Playwright's
objects belong to the event loop that made them, so browser tests run on the session's loop
(tests/conftest.py); code on another loop starts a driver of its own.

When a test fails while its browser is open, every open page is saved as a screenshot in
``failure_shots()``; a test that passes takes none.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright._impl._driver import compute_driver_executable, get_driver_env
from playwright.async_api import Browser, Playwright, async_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# How long a failing test's screenshot may take: a loaded machine must not turn one failure into
# a second, slower one.
SHOT_TIMEOUT_MS = 5_000


class BrowserServer:
    """Chromium behind Playwright's browser server, which tests connect to over a websocket."""

    def __init__(self, executable_path: str) -> None:
        self.executable_path = executable_path
        self.process: subprocess.Popen[bytes] | None = None
        self.endpoint = ""
        self.folder = Path(tempfile.mkdtemp(prefix="bullpen-chromium-"))

    def start(self, timeout: float = 60) -> None:
        config = self.folder / "launch.json"
        options = {"executablePath": self.executable_path, "args": CHROMIUM_ARGS}
        config.write_text(json.dumps({**options, "headless": True}))
        node, cli = compute_driver_executable()
        # The server prints its endpoint once Chromium is up; a file rather than a pipe, so
        # that nothing has to keep reading it for the rest of the session.
        log = self.folder / "server.log"
        with log.open("w") as out:
            self.process = subprocess.Popen(
                [node, cli, "launch-server", "--browser", "chromium", "--config", str(config)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=get_driver_env(),
            )
        deadline = time.monotonic() + timeout
        while not self.endpoint:
            found = re.search(r"^ws://\S+", log.read_text(), re.MULTILINE)
            if found:
                self.endpoint = found.group(0)
            elif self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"Playwright's browser server did not start: {log.read_text()}")
            else:
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None


# A test asking for one of these drives Chromium: it runs on the session's event loop, where the
# process's one Playwright driver lives (starting a driver per test cost about half a CPU-second).
BROWSER_PARTS = ("browser", "chromium_path")
SESSION_LOOP = pytest.mark.asyncio(loop_scope="session")


def on_session_loop(item: pytest.Item) -> bool:
    """Whether a test runs on the session's event loop rather than a loop of its own."""
    marker = item.get_closest_marker("asyncio")
    return marker is not None and marker.kwargs.get("loop_scope") == "session"


def on_the_tests_loop(request: pytest.FixtureRequest, name: str) -> Any:
    """Fixture ``name`` in the variant for the test's event loop: ``<name>_on_session_loop``
    or ``<name>_on_test_loop`` (async fixtures run on the loop their loop_scope says)."""
    loop = "session" if on_session_loop(request.node) else "test"
    return request.getfixturevalue(f"{name}_on_{loop}_loop")


# The running server of this test process (set by the session fixture ``chromium_server``).
shared: BrowserServer | None = None


@dataclass(frozen=True)
class Driver:
    """A started Playwright driver and the event loop its objects belong to."""

    playwright: Playwright
    loop: asyncio.AbstractEventLoop


# The driver of this test process (set by the session fixture ``playwright_driver``).
driver: Driver | None = None


def drives_playwright(task: asyncio.Task[object]) -> bool:
    """Whether a task is Playwright's own (a connection reading its driver or browser)."""
    code = getattr(task.get_coro(), "cr_code", None)
    return code is not None and f"{os.sep}playwright{os.sep}" in code.co_filename


@asynccontextmanager
async def playwright_here() -> AsyncIterator[Playwright]:
    """The process's driver when called on its loop; else one started for this caller alone."""
    if driver is not None and driver.loop is asyncio.get_running_loop():
        yield driver.playwright
        return
    async with async_playwright() as pw:
        yield pw


def failure_shots() -> Path:
    """Where a failing test's pages are saved: one folder per test."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "outside-pytest").split(" ")[0]
    folder = Path(tempfile.gettempdir()) / "bullpen-failures" / re.sub(r"[^\w.-]+", "-", test)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def shoot_open_pages(browser: Browser) -> None:
    """A screenshot of every page still open, for a test that failed (best effort)."""
    folder = failure_shots()
    for c, context in enumerate(browser.contexts):
        for p, page in enumerate(context.pages):
            try:
                await page.screenshot(path=folder / f"{c}-{p}.png", timeout=SHOT_TIMEOUT_MS)
            except Exception:  # noqa: S112 - a page that cannot be shot must not hide the failure
                continue


@asynccontextmanager
async def chromium(chromium_path: str) -> AsyncIterator[Browser]:
    """A browser of this test's own: a connection to the shared Chromium when the session has
    one, else a Chromium launched for it."""
    async with playwright_here() as pw:
        if shared is not None and shared.endpoint:
            browser = await pw.chromium.connect(shared.endpoint)
        else:
            browser = await pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield browser
        except BaseException:
            if browser.is_connected():
                await shoot_open_pages(browser)
            raise
        finally:
            if browser.is_connected():
                await browser.close()
