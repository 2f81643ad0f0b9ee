"""In Chromium at a phone's size (390 by 844): what on-call came for is on the first screen, the
queues on the overview, the failure groups and the jobs of a queue, with the controls folded
under summaries ("Actions", "Find, filter and order"), in light and dark."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
OPERATOR = {"username": "operator", "password": "s3cret-pass"}


async def top_of(page: Page, selector: str) -> float:
    # A live update may replace the element between finding it and measuring it: measure the
    # one that is there then.
    for _ in range(50):
        box = await page.locator(selector).first.bounding_box()
        if box is not None:
            return float(box["y"])
        await asyncio.sleep(0.1)
    raise AssertionError(f"{selector} is not on the page")


@pytest.mark.shared_server
@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_a_phones_first_screen_shows_queues_groups_and_jobs(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, scheme: str
) -> None:
    peer("scenario", "--queue", "shop")
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            viewport=PHONE,
            color_scheme=scheme,  # type: ignore[arg-type]
            extra_http_headers=credentials_header(OPERATOR),
            is_mobile=True,
            has_touch=True,
        )
        page = await context.new_page()
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/")
        await expect(page.locator(".top .who")).to_have_text("operator")
        await expect(page.locator("#live-status")).to_have_text("live")
        first_queue = await top_of(page, "#overview-list tbody tr")
        assert first_queue + 80 < PHONE["height"], first_queue
        # The list's controls are one tap away, not gone.
        await expect(page.get_by_test_id("queue-filter")).not_to_be_visible()
        await page.get_by_test_id("list-options").locator("summary").click()
        await expect(page.get_by_test_id("queue-filter")).to_be_visible()

        await page.goto(f"{bullpen_server.url}/queues/q/shop/?state=failed")
        await expect(page.get_by_test_id("failure-groups")).to_be_visible()
        groups = page.get_by_test_id("failure-groups")
        first_group = await top_of(page, '[data-testid="failure-groups"]')
        assert first_group + 200 < PHONE["height"], first_group
        # Between the groups and the jobs: the state tabs, the folded search and the list's bar.
        box = await groups.bounding_box()
        assert box is not None
        first_job = await top_of(page, "#job-list tbody tr")
        assert first_job - (box["y"] + box["height"]) < 450, (box, first_job)
        # Retry all, Clean and Empty are under "Actions"; opened, they are there.
        actions = page.get_by_test_id("queue-actions")
        await expect(actions.get_by_role("button", name="Retry all failed")).not_to_be_visible()
        await actions.locator("summary").first.click()
        await expect(actions.get_by_role("button", name="Retry all failed")).to_be_visible()
        # Any other tab: its jobs are on the first screen.
        await page.goto(f"{bullpen_server.url}/queues/q/shop/?state=waiting")
        await expect(page.locator("#job-list tbody tr").first).to_be_visible()
        first_job = await top_of(page, "#job-list tbody tr")
        assert first_job + 80 < PHONE["height"], first_job
        # A wide screen shows the same controls open, without the summaries.
        desktop = await browser.new_context(
            viewport={"width": 1280, "height": 800},
            color_scheme=scheme,  # type: ignore[arg-type]
            extra_http_headers=credentials_header(OPERATOR),
        )
        wide = await desktop.new_page()
        failed_tab = "/queues/q/shop/%3Fstate%3Dfailed"
        await wide.goto(f"{bullpen_server.url}/queues/sign-in?next={failed_tab}")
        actions = wide.get_by_test_id("queue-actions")
        await expect(actions.get_by_role("button", name="Retry all failed")).to_be_visible()
        await expect(actions.locator("summary").first).not_to_be_visible()
        await expect(wide.get_by_test_id("throughput")).to_be_visible()
        await browser.close()
