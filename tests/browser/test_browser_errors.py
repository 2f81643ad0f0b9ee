"""In Chromium: what a refused action says on the page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

OPERATOR = {"username": "operator", "password": "s3cret-pass"}


async def test_a_paste_over_the_size_limit_says_so(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    peer("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
        page = await context.new_page()
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/q/mail/")
        await expect(page.locator(".top .who")).to_have_text("operator")
        await page.locator(".add-job summary").click()
        form = page.get_by_test_id("add-job")
        await form.locator('input[name="name"]').fill("big")
        # A paste half a megabyte over the limit, set directly (typing it would take minutes).
        # Chromium works about a second a megabyte before the request leaves: 10 MB took 10 s
        # on a quiet machine, 40 on a loaded one, and proved no more than this.
        await form.locator('textarea[name="data"]').evaluate(
            "(el, size) => { el.value = JSON.stringify({blob: 'x'.repeat(size)}); }",
            settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 512 * 1024,
        )
        # Submitted without waiting on the click: the page is busy encoding the form a while.
        await form.evaluate("f => setTimeout(() => f.requestSubmit())")
        toast = page.locator("#toast")
        await expect(toast).to_contain_text(
            "The request is too large: at most 2.5 MB", timeout=60000
        )
        await expect(toast).to_have_class("error")
        await browser.close()
    assert redis_client.llen("bull:mail:wait") == 1
