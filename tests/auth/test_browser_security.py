"""In a real Chromium, on the standalone site with reads closed: a strict Content-Security-Policy
that nothing on the pages violates, with live updates still working for a basic-auth reader
(whose browser sends no credentials with the websocket handshake); queues named ``..`` and
lookalike names."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_checks import RECORD_VIOLATIONS, SIGNED_IN
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import CREDENTIALS, start_standalone

pytestmark = pytest.mark.browser


@pytest.fixture
def site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_standalone(redis_server.url, tmp_path, **CREDENTIALS, BULLPEN_OPEN_READS="1")
    yield server
    stop_bullpen(server)


async def test_strict_csp_holds_and_live_updates_still_work(
    peer: Peer, site: LiveServer, chromium_path: str
) -> None:
    first = peer("add", "--queue", "render", "--name", "video", "--data", '{"clip": 1}')
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(http_credentials=SIGNED_IN)
        page = await context.new_page()
        await page.add_init_script(RECORD_VIOLATIONS)
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        response = await page.goto(site.url + "/queues/")
        assert response is not None
        policy = await response.header_value("content-security-policy") or ""
        assert "script-src 'self'" in policy and "style-src 'self'" in policy
        assert "unsafe-inline" not in policy
        await expect(page.locator("#live-status")).to_have_text("live")
        waiting = page.locator('tr[data-queue="render"] td[data-state="waiting"]')
        await expect(waiting).to_have_text("1")
        await asyncio.to_thread(peer, "add", "--queue", "render", "--name", "video", "--data", "{}")
        await expect(waiting).to_have_text("2")  # pushed over the websocket
        await page.goto(f"{site.url}/queues/q/render/jobs/{first['id']}/")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.goto(f"{site.url}/queues/q/render/?state=waiting")
        await expect(page.locator("#live-status")).to_have_text("live")
        violations: Any = await page.evaluate("window.__violations")
        assert violations == []
        assert not [text for text in console if "Content Security Policy" in text], console
        await browser.close()


async def test_dot_dot_queue_and_lookalike_names_in_the_browser(
    peer: Peer, site: LiveServer, chromium_path: str
) -> None:
    job = peer("add", "--queue", "..", "--name", "\u202eliame", "--data", json.dumps({"a": 1}))
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(http_credentials=SIGNED_IN)
        page = await context.new_page()
        await page.goto(site.url + "/queues/")
        await page.locator('tr[data-queue=".."] a').first.click()
        await expect(page.locator("h1")).to_contain_text("..")
        assert "/queues/q/" in page.url and not page.url.rstrip("/").endswith("/queues")
        await page.locator(f'tr[data-job-id="{job["id"]}"] a').first.click()
        await expect(page.locator("h1 .muted")).to_have_text("\\u202Eliame")
        await expect(page.locator("h1 .ctrl")).to_have_text("\\u202E")
        await browser.close()
