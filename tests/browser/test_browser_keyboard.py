"""In a real Chromium, the keyboard alone gets around: "?" lists the shortcuts in a dialog, "j"
and "k" move a visible focus through the overview's and a queue's rows, Enter opens the row,
"x" selects a job, "/" goes to the page's search or filter, "g" then "o" back to the overview;
none of them fires while typing in a field or with a modifier held."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

OPERATOR: Any = {"username": "operator", "password": "s3cret-pass"}


def seed(peer: Peer) -> None:
    """Queues ``billing``, ``email`` (three failed jobs) and ``shop`` (two waiting jobs)."""
    peer("add", "--queue", "billing", "--name", "invoice", "--data", "{}")
    for index in range(3):
        peer("add", "--queue", "email", "--name", "send", "--data", json.dumps({"n": index}))
    peer("work", "--queue", "email", "--count", "3", "--fail")
    for index in range(2):
        peer("add", "--queue", "shop", "--name", "order", "--data", json.dumps({"n": index}))


def marked(page: Page) -> Any:
    return page.locator("tr.kbd-row")


async def test_the_keyboard_walks_the_rows_and_opens_them(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    seed(peer)
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
        page = await context.new_page()
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/")
        await expect(page.locator(".top .who")).to_have_text("operator")
        keys = page.keyboard

        # "?": the shortcuts, in a modal dialog rendered with the page; Escape closes it.
        dialog = page.get_by_role("dialog", name="Preferences and shortcuts")
        await expect(dialog).to_be_hidden()
        await keys.press("?")
        await expect(dialog).to_be_visible()
        await expect(dialog).to_contain_text("Go to the overview")
        await keys.press("j")  # the rows behind a modal dialog stay as they are
        await expect(marked(page)).to_have_count(0)
        await keys.press("Escape")

        # "j" and "k" move a visible focus through the queues; Enter opens the one reached.
        # Right after Escape too: the dialog's field keeps the focus a moment after it closed.
        await keys.press("j")
        await expect(dialog).to_be_hidden()
        await expect(marked(page)).to_have_attribute("data-queue", "billing")
        await expect(page.get_by_role("link", name="billing", exact=True)).to_be_focused()
        await keys.press("?")
        await expect(dialog).to_be_visible()
        await keys.press("Escape")
        await keys.press("j")
        await expect(marked(page)).to_have_attribute("data-queue", "email")
        await keys.press("j")
        await expect(marked(page)).to_have_attribute("data-queue", "shop")
        await keys.press("j")  # the last row stays the last
        await expect(marked(page)).to_have_attribute("data-queue", "shop")
        await keys.press("k")
        await expect(marked(page)).to_have_attribute("data-queue", "email")
        outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", "the focused row's link shows its focus"
        await keys.press("Enter")
        await expect(page.locator("h1")).to_contain_text("email")
        await expect(page.locator(".tab.current")).to_have_attribute("data-state", "failed")

        # A job row: "x" selects and unselects its checkbox.
        await keys.press("j")
        first = page.locator("#job-list tbody tr").first
        await expect(marked(page)).to_have_attribute(
            "data-job-id", await first.get_attribute("data-job-id") or ""
        )
        box = first.locator(".job-select")
        await keys.press("x")
        await expect(box).to_be_checked()
        await keys.press("x")
        await expect(box).not_to_be_checked()
        await keys.press("j")
        await keys.press("x")
        await expect(
            page.locator("#job-list tbody tr").nth(1).locator(".job-select")
        ).to_be_checked()
        await expect(box).not_to_be_checked()

        # "/": the queue's search box. Typed there, the shortcut keys are just letters.
        await keys.press("/")
        search = page.locator("form.search input[name=q]")
        await expect(search).to_be_focused()
        await keys.type("jxgo?")
        await expect(search).to_have_value("jxgo?")
        await expect(dialog).to_be_hidden()
        await expect(page.locator("h1")).to_contain_text("email")
        await search.fill("")

        # With a modifier held, nothing happens either.
        await page.locator("h1").click()
        await keys.press("Alt+j")
        await expect(marked(page)).to_have_attribute(
            "data-job-id",
            await page.locator("#job-list tbody tr").nth(1).get_attribute("data-job-id") or "",
        )

        # Enter on a row marked while the focus went elsewhere opens it too.
        job_id = await marked(page).get_attribute("data-job-id")
        await keys.press("Enter")
        await expect(page.locator("h1 .mono")).to_have_text(job_id or "")

        # On a job page, "/" filters its log lines; "g" then "o" goes to the overview.
        await keys.press("/")
        await expect(page.locator(".log-filter")).to_be_focused()
        await page.locator("h1").click()
        await keys.press("g")
        await keys.press("o")
        await expect(page.locator("h1")).to_contain_text("Queues")
        await keys.press("/")
        await expect(page.locator("#queue-filter")).to_be_focused()
        await browser.close()
