"""The overview of 500 queues in Chromium: filter as you type, order by a column, only the
problems, groups that open, a group action, and a phone."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_pages import OPERATOR, credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_an_overview_of_500_queues(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    # 250 tenants, each with a mail and a billing queue; every 25th tenant's mail queue holds a
    # failed job, every 50th tenant's queues are paused, tenant i's queues hold i % 4 waiting jobs.
    peer("many-queues", "--count", "250", "--services", "mail,billing", timeout=180)
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 1400, "height": 900},
        )
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/")
        rows = page.locator("tr[data-queue]")
        status = page.locator('[data-testid="listing-status"]')
        await expect(rows).to_have_count(100)
        await expect(status).to_contain_text("500 of 500 queues · page 1 of 5")
        await expect(page.locator('th[data-total="failed"]')).to_have_text("10")
        # No request per row (sparklines come with the page).
        assert not [url for url in requests if "/throughput/" in url]

        # "/" puts the cursor in the filter; the list follows the typing.
        await page.keyboard.press("/")
        await expect(page.locator("#queue-filter")).to_be_focused()
        await page.keyboard.type("t01")
        await expect(rows).to_have_count(20)
        await expect(status).to_contain_text("20 of 500 queues")
        assert "q=t01" in page.url
        names = await rows.evaluate_all("rows => rows.map(r => r.dataset.queue)")
        assert all("t01" in name for name in names) and names[0] == "t010-billing"
        await page.fill("#queue-filter", "")
        await expect(rows).to_have_count(100)

        # A column heading orders by it, the most first.
        await page.locator('thead a[data-sort="failed"]').click()
        await expect(rows.first).to_have_attribute("data-queue", "t025-mail")
        await expect(rows.first.locator('td[data-state="failed"]')).to_have_text("1")
        assert "sort=-failed" in page.url

        # Only problems: failed, paused, and queues whose jobs wait for a worker nobody runs.
        await page.locator('[data-testid="only-problems"]').check()
        problems = await page.request.get(
            f"{bullpen_server.url}/queues/api/queues/?problems=1&per_page=500"
        )
        expected = (await problems.json())["matching"]
        assert 10 < expected < 500
        await expect(status).to_contain_text(f"{expected} of 500 queues")
        await expect(page.locator('tr[data-queue="t004-mail"]')).to_have_count(0)  # no jobs
        await expect(
            page.locator('tr[data-queue="t001-mail"] [data-testid="no-workers"]')
        ).to_be_visible()
        await page.locator('[data-testid="only-problems"]').uncheck()

        # Groups by tenant, with the counts of all their queues; one opens in place.
        await page.select_option('[data-testid="sort"]', "name")
        await page.select_option('[data-testid="grouping"]', "head")
        groups = page.locator('tbody[data-testid="group"]')
        await expect(groups).to_have_count(100)
        await expect(status).to_contain_text("100 groups on this page · 500 of 500 queues")
        t025 = page.locator('tbody[data-group="t025"]')
        await expect(t025.locator('td[data-group-state="failed"]')).to_have_text("1")
        await expect(t025.locator("tr[data-queue]")).to_have_count(0)
        await t025.locator('[data-testid="group-toggle"]').click()
        await expect(t025.locator("tr[data-queue]")).to_have_count(2)
        await expect(t025.locator("tr[data-queue]").first).to_be_visible()
        await t025.locator('[data-testid="group-toggle"]').click()
        await expect(t025.locator("tr[data-queue]").first).to_be_hidden()

        # A group action reaches every queue of the group, and the page says so.
        t007 = page.locator('tbody[data-group="t007"]')
        await t007.locator('[data-testid="group-pause"]').click()
        await expect(page.locator('[data-testid="toast"]').first).to_contain_text(
            "Group t007: 2 queues paused"
        )
        await expect(page.locator('tbody[data-group="t007"] .badge.paused')).to_have_text(
            "2 paused"
        )
        assert redis_client.hget("bull:t007-mail:meta", "paused") == "1"
        assert redis_client.hget("bull:t007-billing:meta", "paused") == "1"
        assert redis_client.hget("bull:t008-mail:meta", "paused") is None

        # A phone: the same list as cards, nothing wider than the screen.
        phone = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 390, "height": 844},
            is_mobile=True,
        )
        small = await phone.new_page()
        await small.goto(f"{bullpen_server.url}/queues/?group=head&sort=-failed")
        await expect(small.locator('tbody[data-testid="group"]').first).to_have_attribute(
            "data-group", "t025"
        )
        width = await small.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width
        await browser.close()
