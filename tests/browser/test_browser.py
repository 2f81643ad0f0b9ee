"""A real Chromium walks overview → queue → failed tab → job detail, without full reloads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_triage_walk(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    scenario: dict[str, Any] = peer("scenario", "--queue", "shop")
    failed_id = scenario["ids"]["failed"][0]
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(bullpen_server.url + "/queues/")
        await expect(page.locator('tr[data-queue="shop"] td[data-state="failed"]')).to_have_text(
            "2"
        )
        # A marker on window survives htmx swaps but not a full page load.
        await page.evaluate("window.bullpenNoReload = true")

        await page.click('tr[data-queue="shop"] >> text=shop')
        await expect(page.locator("h1")).to_contain_text("shop")
        await page.click('.tabs a[data-state="failed"]')
        await expect(page.locator(".tab.current")).to_contain_text("failed")
        await expect(page.locator("table.jobs tbody tr")).to_have_count(2)

        await page.click(f'tr[data-job-id="{failed_id}"] td a')
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")
        await expect(page.locator(".failure .reason")).to_contain_text("card declined")
        await expect(page.locator("pre.stack").first).to_be_visible()
        await expect(page.locator(".log-lines li")).to_have_count(3)
        assert page.url.endswith(f"/queues/q/shop/jobs/{failed_id}/")
        assert await page.evaluate("window.bullpenNoReload === true")

        # The log filter and relative times work in the page.
        await page.fill(".log-filter", "attempt 2")
        await expect(page.locator(".log-lines li:not(.hidden)")).to_have_count(1)
        rel = await page.locator(".facts time .rel").first.text_content()
        assert rel is not None and rel.endswith("ago")
        shot = tmp_path / "3-job.png"
        await page.screenshot(path=shot)
        assert shot.stat().st_size > 10_000
        # The permalink opens the same job on a fresh load.
        await page.goto(page.url)
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")
        assert errors == []
        await browser.close()
