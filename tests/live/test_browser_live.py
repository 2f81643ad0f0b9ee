"""In a real Chromium, counts and a progress bar move while the Node peer works: no reload."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import async_playwright, expect

from tests.support.browser import CHROMIUM_ARGS
from tests.support.live_server import LiveServer
from tests.support.peer import Peer

pytestmark = pytest.mark.browser


async def test_counts_and_progress_move_on_screen(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    first = peer("add", "--queue", "render", "--name", "video", "--data", '{"clip": 1}')
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
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
        await page.screenshot(path=tmp_path / "overview-live.png")

        # Open the first job, then let a Node worker run it slowly with progress.
        await page.goto(f"{bullpen_server.url}/queues/q/render/jobs/{first['id']}/")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("window.bullpenNoReload = true")
        await asyncio.sleep(1.5)  # the watch reaches the follower
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
        await page.screenshot(path=tmp_path / "job-progress.png")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text(
            "completed", timeout=20000
        )
        await expect(bar).to_have_attribute("value", "100")
        await expect(page.locator(".log-lines li")).to_have_count(4, timeout=5000)
        await work
        assert await page.evaluate("window.bullpenNoReload === true")
        await page.screenshot(path=tmp_path / "job-done.png", full_page=True)

        # The queue's active tab: the next job's row arrives live and its progress cell moves.
        await page.goto(f"{bullpen_server.url}/queues/q/render/?state=active")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("window.bullpenNoReload = true")
        await asyncio.sleep(1.5)  # the watch reaches the follower
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
        await page.screenshot(path=tmp_path / "queue-progress.png")
        await work
        assert await page.evaluate("window.bullpenNoReload === true")
        await browser.close()
