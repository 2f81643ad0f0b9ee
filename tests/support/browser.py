"""One Chromium per test process, a connection of its own per test.

Launching Chromium cost every browser test a second or more of CPU on a loaded machine. The
session starts one Chromium behind Playwright's browser server (``launch-server``); each test
connects to it and gets a ``Browser`` of its own: the contexts and pages it makes are its alone
(cookies, storage, viewport), and closing it closes them and leaves Chromium running for the
next test. Each test still starts its own Playwright driver: Playwright's objects belong to one
event loop, and every test has a loop of its own.

When a test fails while its browser is open, every open page is saved as a screenshot in
``failure_shots()``; a test that passes takes none.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright._impl._driver import compute_driver_executable, get_driver_env
from playwright.async_api import Browser, async_playwright

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


# The running server of this test process (set by the session fixture ``chromium_server``).
shared: BrowserServer | None = None


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
    async with async_playwright() as pw:
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
