"""The 3 a.m. path in Chromium: the failure count jumped → which errors → since when → retry one."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, Route, expect

from tests.support.browser import chromium
from tests.support.browser_pages import OPERATOR, credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

ERRORS = (
    ["SMTP timeout after 30000 ms"] * 4
    + ["mailbox user 7 unavailable", "mailbox user 912 unavailable"]
    + ["template 'welcome-v2' not found"]
)


async def add_and_fail(peer: Peer, name: str, error: str, count: int) -> None:
    """A job of ``email`` that fails with ``error``; then ``count`` waiting jobs are worked,
    each failing with its own data's error."""
    data = json.dumps({"error": error})
    await asyncio.to_thread(peer, "add", "--queue", "email", "--name", name, "--data", data)
    await asyncio.to_thread(peer, "work", "--queue", "email", "--count", str(count), "--fail")


async def what_the_page_asked(page: Page, error: AssertionError, asked: list[str]) -> str:
    """A failure's message with where the page is and what it asked for, in order."""
    shown = await page.evaluate("location.href + ' ' + document.title")
    return f"{error}\nshown: {shown}\nasked:\n" + "\n".join(asked)


async def test_from_failure_count_to_retrying_one_group(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    for index, message in enumerate(ERRORS):
        peer(
            "add",
            "--queue",
            "email",
            "--name",
            f"send-{index}",
            "--data",
            json.dumps({"to": f"user{index}@example.com", "error": message}),
        )
    peer("work", "--queue", "email", "--count", str(len(ERRORS)), "--fail", "--concurrency", "4")
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 1400, "height": 900},
        )
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        # The page's own requests after it loaded, named in a failure: which one swapped what.
        asked: list[str] = []
        page.on(
            "request",
            lambda request: asked.append(
                f"{request.resource_type} {request.url} target={request.headers.get('hx-target')}"
            ),
        )
        page.on(
            "response",
            lambda response: asked.append(f"  answered {response.status} {response.url}"),
        )
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/")
        failed = page.locator('tr[data-queue="email"] td[data-state="failed"] a')
        await expect(failed).to_have_text(str(len(ERRORS)))

        # The count moves on while the page it links to is on its way (held here until then):
        # that page still comes with its own address, which the page's later requests use.
        count_moved = asyncio.Event()

        async def hold_the_failed_tab(route: Route) -> None:
            await count_moved.wait()
            await route.continue_()

        def is_failed_tab(url: str) -> bool:
            return url.endswith("/queues/q/email/?state=failed")

        await page.route(is_failed_tab, hold_the_failed_tab)
        async with page.expect_request(lambda request: is_failed_tab(request.url)):
            await failed.click()
        await add_and_fail(peer, "send-late", "mailbox user 8 unavailable", count=1)
        # The totals moved: the update came (the clicked count itself waits for the page).
        await expect(page.locator('th[data-total="failed"]')).to_have_text(str(len(ERRORS) + 1))
        count_moved.set()
        groups = page.locator('[data-testid="failure-groups"] tbody tr')
        await expect(groups).to_have_count(3)
        await expect(page).to_have_url(f"{bullpen_server.url}/queues/q/email/?state=failed")
        await expect(page).to_have_title(re.compile("^email"))
        await page.unroute(is_failed_tab, hold_the_failed_tab)
        first = groups.first
        await expect(first).to_contain_text("SMTP timeout after <n> ms")
        await expect(first.locator("td").first).to_have_text("4")
        await expect(first.locator("time").first).to_be_visible()  # since when

        await first.locator('[data-testid="retry-group"]').click()
        await expect(page.locator('.tab[data-state="failed"] .count')).to_have_text("4")
        try:
            await expect(groups).to_have_count(2)
        except AssertionError as error:
            raise AssertionError(await what_the_page_asked(page, error, asked)) from None

        # A new kind of failure arrives while the page is open: its group appears, no reload.
        await page.evaluate("window.bullpenNoReload = true")
        await asyncio.sleep(1.5)  # the page's watch reaches the live follower
        await add_and_fail(peer, "send-new", "disk full on /var/spool", count=5)
        try:  # SMTP is back, disk full is new
            await expect(groups).to_have_count(4, timeout=20000)
        except AssertionError as error:
            raise AssertionError(await what_the_page_asked(page, error, asked)) from None
        await expect(page.locator('[data-testid="failure-groups"]')).to_contain_text("disk full")
        assert await page.evaluate("window.bullpenNoReload === true")
        await browser.close()
    # The 4 retried jobs failed again with the new job: 4 + 4 + 1 failed now.
    assert redis_client.zcard("bull:email:failed") == 9
