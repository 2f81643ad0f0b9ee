"""In Chromium: a site whose only connection is a PostgreSQL store, served by daphne with no Redis
anywhere. The overview's counts and a pause's reason follow without a reload and the page stays
live (the store's reader beats for it); with two server processes each one's pages follow on their
own, and go on when the other process stops."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from tests.support.action_requests import AUTH
from tests.support.peer import PostgresPeer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen

pytestmark = pytest.mark.browser

# Nothing listens there: a Redis the site would reach for is a failure, not a fallback.
NO_REDIS = "redis://127.0.0.1:1/0"


def pg_only_server(postgres_url: str, log: Path) -> LiveServer:
    connections = {"pg": {"URL": postgres_url}}
    extra = {"BULLPEN_TEST_CONNECTIONS": json.dumps(connections), "BULLPEN_TEST_TASKS": "0"}
    return start_bullpen(NO_REDIS, log, extra, wait=False)


@pytest.fixture
def pg_only_sites(postgres_url: str, tmp_path: Path) -> Iterator[list[LiveServer]]:
    servers = [pg_only_server(postgres_url, tmp_path / f"daphne-{n}.log") for n in range(2)]
    yield servers
    for server in servers:
        stop_bullpen(server)


async def overview(browser: Browser, site: LiveServer) -> Page:
    page = await browser.new_page(viewport={"width": 1200, "height": 800})
    await page.goto(f"{site.url}/queues/")
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    return page


def pause(site: LiveServer, queue: str, reason: str) -> None:
    """The pause action as an API client asks it (basic credentials, no browser)."""
    body = urllib.parse.urlencode({"reason": reason}).encode()
    url = f"{site.url}/queues/api/queues/{queue}/pause/"
    request = urllib.request.Request(url, data=body, headers=AUTH, method="POST")  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - the test's server
        assert answer.status == 200


def waiting(page: Page) -> Locator:
    return page.locator('tr[data-queue="shop"] td[data-state="waiting"]')


async def test_the_overview_follows_node_and_stays_live(
    pg_peer: PostgresPeer, pg_only_sites: list[LiveServer], browser: Browser
) -> None:
    pg_peer("add", "--queue", "shop", "--name", "order", "--data", "{}")
    page = await overview(browser, pg_only_sites[0])
    await expect(page.get_by_test_id("needs-redis")).to_contain_text("need a Redis connection")
    await page.evaluate("window.bullpenNoReload = true")
    await expect(waiting(page)).to_have_text("1")
    pg_peer("add-bulk", "--queue", "shop", "--name", "order", "--count", "4")
    await expect(waiting(page)).to_have_text("5")
    # Paused elsewhere: the row says why, escaped, read from the site's database.
    await asyncio.to_thread(pause, pg_only_sites[0], "shop", "disk <full>")
    reason = page.locator('tr[data-queue="shop"] [data-testid="pause-reason"]')
    await expect(reason).to_have_text("disk <full>")
    # A page that hears nothing for 7 s says "stale": the store's reader beats for it.
    await asyncio.sleep(8)
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    assert await page.evaluate("window.bullpenNoReload === true")


async def test_each_server_process_serves_its_own_pages(
    pg_peer: PostgresPeer, pg_only_sites: list[LiveServer], browser: Browser
) -> None:
    pg_peer("add", "--queue", "shop", "--name", "order", "--data", "{}")
    first, second = pg_only_sites
    on_first = await overview(browser, first)
    on_second = await overview(browser, second)
    rows = await browser.new_page(viewport={"width": 1200, "height": 800})
    await rows.goto(f"{second.url}/queues/q/shop/?state=waiting")
    await expect(rows.locator("#live-status")).to_have_attribute("data-state", "live")
    await expect(rows.locator("#job-list tr[data-job-id]")).to_have_count(1)
    for page in (on_first, on_second, rows):
        await page.evaluate("window.bullpenNoReload = true")

    added = pg_peer("add", "--queue", "shop", "--name", "order", "--data", '{"n": "<b>2</b>"}')
    for page in (on_first, on_second):
        await expect(waiting(page)).to_have_text("2")
    new_row = rows.locator(f'#job-list tr[data-job-id="{added["id"]}"]')
    await expect(new_row).to_have_count(1, timeout=15000)

    # One process gone: the other's pages go on, read by that process itself.
    stop_bullpen(first)
    pg_peer("add-bulk", "--queue", "shop", "--name", "order", "--count", "3")
    await expect(waiting(on_second)).to_have_text("5")
    for page in (on_second, rows):
        assert await page.evaluate("window.bullpenNoReload === true")
