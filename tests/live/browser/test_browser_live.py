"""In a real Chromium, counts and a progress bar move while the Node peer works: no reload."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.live_reads import server_watches
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_counts_and_progress_move_on_screen(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    first = peer("add", "--queue", "render", "--name", "video", "--data", '{"clip": 1}')
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1300, "height": 800})
        await page.goto(bullpen_server.url + "/queues/")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("window.bullpenNoReload = true")
        waiting = page.locator('tr[data-queue="render"] td[data-state="waiting"]')
        await expect(waiting).to_have_text("1")
        for i in range(2):
            await asyncio.to_thread(
                peer,
                "add",
                "--queue",
                "render",
                "--name",
                "video",
                "--data",
                f'{{"clip": {i + 2}}}',
            )
        await expect(waiting).to_have_text("3")

        # Open the first job, then let a Node worker run it slowly with progress.
        await page.goto(f"{bullpen_server.url}/queues/q/render/jobs/{first['id']}/")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("window.bullpenNoReload = true")
        await server_watches(redis_client, job=first["id"])
        work = asyncio.create_task(
            asyncio.to_thread(
                peer, "work", "--queue", "render", "--count", "1", "--progress", "--step-ms", "1500"
            )
        )
        bar = page.locator(".progress-live progress")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text(
            "active", timeout=15000
        )
        await expect(bar).to_have_attribute("value", "50", timeout=15000)
        await expect(page.locator('[data-testid="job-state"]')).to_have_text(
            "completed", timeout=20000
        )
        await expect(bar).to_have_attribute("value", "100")
        await expect(page.locator(".log-lines li")).to_have_count(4, timeout=5000)
        await work
        assert await page.evaluate("window.bullpenNoReload === true")

        # The queue's active tab: the next job's row arrives live and its progress cell moves.
        await page.goto(f"{bullpen_server.url}/queues/q/render/?state=active")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("window.bullpenNoReload = true")
        await server_watches(redis_client, queue="render")
        work = asyncio.create_task(
            asyncio.to_thread(
                peer, "work", "--queue", "render", "--count", "1", "--progress", "--step-ms", "1500"
            )
        )
        cell = page.locator("#job-list tr[data-job-id] .progress-cell progress")
        await expect(cell).to_have_attribute("value", "50", timeout=15000)
        await expect(page.locator("#job-list tr[data-job-id] .progress-cell")).to_contain_text(
            "50%"
        )
        await work
        assert await page.evaluate("window.bullpenNoReload === true")
        await browser.close()


KEEP_FIRST_LIST = """
window.bullpenListsSent = 0;
document.addEventListener("DOMContentLoaded", function () {
  window.bullpenFirstList = document.getElementById("job-list");
});
document.addEventListener("bullpen:live", function (event) {
  if (event.detail.type === "list") window.bullpenListsSent += 1;
});
"""


async def test_a_quiet_list_stays_in_place_when_its_socket_subscribes(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    # The server sends the list as Redis holds it when a page subscribes; when nothing moved
    # since the page was rendered, the rows under a person's finger and focus are not replaced.
    for i in range(3):
        peer("add", "--queue", "quiet", "--name", "mail", "--data", f'{{"n": {i}}}')
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1300, "height": 800})
        await page.add_init_script(KEEP_FIRST_LIST)
        await page.goto(bullpen_server.url + "/queues/q/quiet/?state=waiting")
        link = page.locator("#job-list tbody tr a").first
        await link.focus()
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.wait_for_function("window.bullpenListsSent >= 1")
        same = await page.evaluate(
            "document.getElementById('job-list') === window.bullpenFirstList"
        )
        assert same, "the list was swapped for an identical one"
        focused = await page.evaluate("document.activeElement.closest('#job-list') !== null")
        assert focused, "the focus left the list"

        # A job added meanwhile does come in.
        peer("add", "--queue", "quiet", "--name", "mail", "--data", '{"n": 3}')
        await expect(page.locator("#job-list tbody tr")).to_have_count(4, timeout=15000)
