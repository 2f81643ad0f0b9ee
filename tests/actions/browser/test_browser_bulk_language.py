"""In Chromium: a bulk action's bar and toasts are the server's words in each page's language,
the action named as its button names it; its Cancel button stops it; a page opened while it
runs shows its bar with the page and follows it to its end."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser

OPERATOR = {"username": "operator", "password": "s3cret-pass"}
# Through the sign-in page, which sends a signed-in operator on to the failed tab.
FAILED_TAB = "/queues/sign-in?next=/queues/q/mail/%3Fstate%3Dfailed"


async def test_a_retry_all_in_german_then_cancelled(
    peer: Peer, redis_server: RedisServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "1200")
    peer("work", "--queue", "mail", "--count", "1200", "--fail", "--concurrency", "200")
    # Small, slow batches: the action runs for a minute unless cancelled.
    slow = {"BULLPEN_TEST_ACTIONS": json.dumps({"batch_size": 10, "pause_ms": 500})}
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", extra_env=slow)
    try:
        async with chromium(chromium_path) as browser:
            german = await (
                await browser.new_context(
                    locale="de-DE", extra_http_headers=credentials_header(OPERATOR)
                )
            ).new_page()
            german.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
            # Another page of the queue, in English, that only watches.
            english = await (
                await browser.new_context(
                    locale="en-US", extra_http_headers=credentials_header(OPERATOR)
                )
            ).new_page()
            for page in (german, english):
                await page.goto(f"{server.url}{FAILED_TAB}")
            for page in (german, english):
                await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")

            await german.get_by_role(
                "button", name="Alle erneut versuchen (fehlgeschlagen)"
            ).click()
            toast = german.locator("#toast")
            await expect(toast).to_have_text("Alle erneut versuchen: gestartet, 1.200 Jobs")
            label = german.get_by_test_id("bulk-label")
            await expect(label).to_have_text(
                re.compile(r"^Alle erneut versuchen: [1-9][0-9]* von 1\.200$"), timeout=20000
            )
            await expect(english.get_by_test_id("bulk-label")).to_have_text(
                re.compile(r"^Retry all: [1-9][0-9]* of 1,200$"), timeout=20000
            )
            # A page opened while it runs: its bar comes with the page, and the page follows
            # the action to its end as the one that started it does.
            late = await (
                await browser.new_context(
                    locale="en-US", extra_http_headers=credentials_header(OPERATOR)
                )
            ).new_page()
            opened = await late.goto(f"{server.url}{FAILED_TAB}")
            assert opened is not None and 'data-testid="bulk-cancel"' in await opened.text()
            await expect(late.get_by_test_id("bulk-label")).to_have_text(
                re.compile(r"^Retry all: [1-9][0-9]* of 1,200$")
            )
            await german.get_by_test_id("bulk-cancel").click()
            ended = re.compile(
                r"^Abgebrochen: [1-9][0-9]* Jobs erneut versucht\. Abgebrochen von operator$"
            )
            await expect(label).to_have_text(ended, timeout=20000)
            await expect(toast).to_have_text(ended)
            await expect(german.get_by_test_id("bulk-cancel")).to_have_count(0)
            await expect(english.get_by_test_id("bulk-label")).to_have_text(
                re.compile(r"^Cancelled: [1-9][0-9]* jobs retried\. Cancelled by operator$"),
                timeout=20000,
            )
            await expect(late.locator("#toast")).to_have_text(
                re.compile(r"^Cancelled: [1-9][0-9]* jobs retried\. Cancelled by operator$"),
                timeout=20000,
            )
            await browser.close()
    finally:
        stop_bullpen(server)
    # Stopped well before the end; every job is either still failed or waiting again.
    waiting = redis_client.llen("bull:mail:wait")
    assert 0 < waiting < 1200
    assert redis_client.zcard("bull:mail:failed") + waiting == 1200
