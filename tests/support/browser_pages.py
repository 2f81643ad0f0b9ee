"""Helpers that several test modules share.

Moved here from ``tests.browser.test_browser_landing``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from playwright.async_api import Browser, Page, expect

from tests.support.browser import chromium
from tests.support.paths import ROOT
from tests.support.servers.live_server import LiveServer
from tests.support.servers.server_forks import fork_manage

__all__ = [
    "OPERATOR",
    "RECORD_SOCKETS",
    "SHOTS",
    "answer_dialogs",
    "chromium",
    "credentials_header",
    "operator_page",
    "settled",
    "socket_messages",
]

OPERATOR = {"username": "operator", "password": "s3cret-pass"}


# For page.add_init_script: how many live sockets each page load opened (window.socketsOpened)
# and the close code of every one it saw closed (window.closeCodes).
RECORD_SOCKETS = """
window.closeCodes = [];
window.socketsOpened = 0;
document.addEventListener("htmx:wsClose", function (event) {
  window.closeCodes.push(event.detail.event.code);
});
document.addEventListener("htmx:wsOpen", function () { window.socketsOpened += 1; });
"""

SHOTS = Path(tempfile.gettempdir())  # a folder that outlives the run, for a picture on purpose


def credentials_header(credentials: Mapping[str, str]) -> dict[str, str]:
    """Basic credentials as the header every request of a context sends (``extra_http_headers``),
    for a test about what a signed-in operator sees rather than about signing in.

    Playwright answers ``http_credentials`` by holding every request of the context in its driver
    until it lets it go (Chromium's Fetch domain): a page and three loads cost Chromium 15 % more
    CPU and took half as long again on a loaded machine. Tests of the browser's own prompt
    (signing out forgets the credentials it answered with) keep ``http_credentials``."""
    pair = f"{credentials['username']}:{credentials['password']}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}


async def operator_page(
    browser: Browser, server: LiveServer, next_path: str, *, prompted: bool = False
) -> Page:
    """The operator signed in on ``next_path``; ``prompted``: by answering the browser's
    credentials prompt, for a test that signs out (else by a header on every request)."""
    signing_in: dict[str, Any] = (
        {"http_credentials": OPERATOR}
        if prompted
        else {"extra_http_headers": credentials_header(OPERATOR)}
    )
    context = await browser.new_context(viewport={"width": 1400, "height": 900}, **signing_in)
    page = await context.new_page()
    await page.goto(f"{server.url}/queues/sign-in?next={quote(next_path)}")
    await expect(page.locator(".top .who")).to_have_text("operator")
    return page


def answer_dialogs(page: Page, prompt_text: str | None = None) -> None:
    """Accept hx-confirm (and type ``prompt_text`` into hx-prompt)."""

    async def accept(dialog: Any) -> None:
        if dialog.type == "prompt" and prompt_text is not None:
            await dialog.accept(prompt_text)
        else:
            await dialog.accept()

    page.on("dialog", accept)


def _create_superuser(server: LiveServer, username: str, password: str) -> None:
    """A staff user in the live server's own database (the test settings' admin login), by
    ``manage.py createsuperuser`` forked as the server was: a fresh interpreter spent about a
    CPU-second more importing Django first."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "BULLPEN_TEST_DB": str(server.log.with_suffix(".sqlite3")),
        "DJANGO_SUPERUSER_PASSWORD": password,
        "PYTHONPATH": str(ROOT),
    }
    log = server.log.with_name(f"createsuperuser-{username}.log")
    argv = ["createsuperuser", "--no-input", "--username", username]
    command = fork_manage([*argv, "--email", f"{username}@example.com"], env, ROOT, log)
    assert command.wait(timeout=120) == 0, log.read_text()


def socket_messages(page: Page, kind: str) -> asyncio.Event:
    """Set once the page's websocket has received a message of ``kind`` (``"list"``, ...):
    listen before the page is opened. A test waits on it where what the page shows next must
    not be swapped away by a message still on its way."""
    arrived = asyncio.Event()

    def on_frame(payload: str | bytes) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            return
        types = [message.get("type")] + [m.get("type") for m in message.get("messages", [])]
        if kind in types:
            arrived.set()

    page.on("websocket", lambda socket: socket.on("framereceived", on_frame))
    return arrived


async def settled(page: Page, listed: asyncio.Event) -> None:
    """The page holds still under a click: the parts it loads after itself are in (a failed
    tab's failure groups, when they came late, into their closed fold: a test that opens it
    finds them there), and its socket has answered for its list (``listed``:
    ``socket_messages(page, "list")``), which stands or came fresh."""
    await expect(page.locator('[hx-trigger="load"]')).to_have_count(0)
    await asyncio.wait_for(listed.wait(), 15)
