"""In Chromium: the header's live pill and the overview's rows say only what the server has
confirmed, from a start with Redis away to a busy queue and a queue created while a page is open."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from tests.conftest import CHROMIUM_ARGS, LiveServer, Peer, start_bullpen, stop_bullpen
from tests.redis_server import free_port

pytestmark = pytest.mark.browser

# Every state the pill takes, in order, from before live.js first touches it.
RECORD_PILL = """
window.pillStates = [];
document.addEventListener("DOMContentLoaded", function () {
  var pill = document.getElementById("live-status");
  if (!pill) return;
  window.pillStates.push(pill.dataset.state);
  new MutationObserver(function () {
    window.pillStates.push(pill.dataset.state);
  }).observe(pill, { attributes: true, attributeFilter: ["data-state"] });
});
"""


@pytest.fixture
async def browser(chromium_path: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield launched
        await launched.close()


async def recording_page(browser: Browser) -> Page:
    page = await browser.new_page(viewport={"width": 1300, "height": 900})
    await page.add_init_script(RECORD_PILL)
    return page


async def test_pill_never_says_live_before_redis_answered(browser: Browser, tmp_path: Path) -> None:
    # A fresh server whose Redis is not there: its live reader has not tried Redis yet when the
    # first page connects, and then finds it unreachable.
    server = start_bullpen(f"redis://127.0.0.1:{free_port()}/0", tmp_path / "daphne.log")
    try:
        page = await recording_page(browser)
        answer = await page.goto(server.url + "/queues/")
        assert answer is not None and answer.status == 503
        await expect(page.locator("main")).to_contain_text("Redis is unreachable")
        pill = page.locator("#live-status")
        await expect(pill).to_have_attribute("data-state", "down", timeout=20000)
        states = await page.evaluate("window.pillStates")
        assert "live" not in states, states
        await page.screenshot(path=tmp_path / "down.png")
    finally:
        stop_bullpen(server)


async def test_busy_queue_page_is_live_again_with_its_next_update(
    browser: Browser, bullpen_server: LiveServer, peer: Peer, tmp_path: Path
) -> None:
    # A queue that stays busy for a while: a worker takes its jobs one by one.
    await asyncio.to_thread(peer, "add-bulk", "--queue", "busy", "--name", "n", "--count", "400")
    page = await recording_page(browser)
    await page.clock.install()
    await page.goto(bullpen_server.url + "/queues/q/busy/?state=completed")
    pill = page.locator("#live-status")
    await expect(pill).to_have_attribute("data-state", "live")
    work = asyncio.create_task(
        asyncio.to_thread(
            peer, "work", "--queue", "busy", "--count", "400", "--delay-ms", "60", timeout=90
        )
    )
    completed = page.locator('.tab[data-state="completed"] .count')
    await expect(completed).not_to_have_text("0", timeout=15000)

    # The page hears nothing for 8 s (a laptop lid closed, a stalled tab): its figures may be
    # out of date, and it says so.
    await page.clock.fast_forward(8000)
    await page.wait_for_function("window.pillStates.includes('stale')")
    # The queue's counts keep coming: they prove the reader lives as a beat does, so the page
    # is live again with the next one, though the reader beats only to pages it sends nothing.
    before = await completed.text_content()
    await expect(pill).to_have_attribute("data-state", "live", timeout=5000)
    await expect(completed).not_to_have_text(before or "", timeout=5000)
    assert not work.done(), "the queue went quiet before the page could show it live"
    await expect(page.locator("body")).not_to_have_class(re.compile(r"\bstale\b"))
    await page.screenshot(path=tmp_path / "busy-live.png")
    await work
