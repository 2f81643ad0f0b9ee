"""In Chromium: a queue obliterated by Node on a PostgreSQL store while pages show it. An open
overview drops its row and its counts from the totals, an open queue page says the queue is
gone, and the queue list leaves it out, all without a reload, though the server's discovery
keeps its list for 30 s. On a site with the store alone (each process reads for its own pages)
and beside a Redis (one reader, its messages through the channel layer)."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.support.action_requests import AUTH
from tests.support.browser_checks import WAITING_SUMS
from tests.support.peer import PostgresPeer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser

# The store reader's check of the queues pages show comes every 5 s, its confirmation one
# round trip, the list one request: comfortably within this on a loaded machine.
GONE_WITHIN_MS = 20_000


@pytest.fixture(params=["alone", "beside-redis"])
def store_site(
    request: pytest.FixtureRequest,
    redis_server: RedisServer,
    pg_peer: PostgresPeer,
    postgres_url: str,
    tmp_path: Path,
) -> Iterator[tuple[LiveServer, str]]:
    """A site whose discovery keeps its list for 30 s, as a site does by default, and what its
    store's queue slugs end with (the first connection's queues have none). Its queues are
    made first: its first list holds them all."""
    for queue, n in (("alpha", 1), ("bravo", 2), ("charlie", 3)):
        pg_peer("add-bulk", "--queue", queue, "--name", "n", "--count", str(n))
    if request.param == "alone":
        # Nothing listens there: a Redis the site would reach for is a failure.
        redis_url, names = "redis://127.0.0.1:1/0", {"pg": {"URL": postgres_url}}
    else:
        redis_url = redis_server.url
        names = {"main": {"URL": redis_server.url}, "pg": {"URL": postgres_url}}
    extra = {
        "BULLPEN_TEST_CONNECTIONS": json.dumps(names),
        "BULLPEN_TEST_TASKS": "0",
        "BULLPEN_TEST_DISCOVERY_INTERVAL": "30",
    }
    server = start_bullpen(redis_url, tmp_path / "daphne.log", extra, wait=False)
    yield server, "" if request.param == "alone" else "@pg"
    stop_bullpen(server)


def listed(site: LiveServer) -> list[str]:
    """The queue slugs ``api/queues/`` lists."""
    url = f"{site.url}/queues/api/queues/"
    request = urllib.request.Request(url, headers=AUTH)  # noqa: S310 - the test's server
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 - the test's server
        body: dict[str, Any] = json.loads(answer.read())
    return sorted(queue["slug"] for queue in body["queues"])


async def open_live(browser: Browser, url: str) -> Page:
    page = await browser.new_page(viewport={"width": 1300, "height": 900})
    await page.goto(url)
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    await page.evaluate("window.bullpenNoReload = true")
    return page


async def test_an_obliterated_store_queue_leaves_the_open_pages(
    pg_peer: PostgresPeer, store_site: tuple[LiveServer, str], browser: Browser
) -> None:
    site, at = store_site
    overview = await open_live(browser, f"{site.url}/queues/")
    rows = overview.locator("#overview-rows tr[data-queue]")
    await expect(rows).to_have_count(3)
    await expect(overview.locator('th[data-total="waiting"]')).to_have_text("6")
    queue_page = await open_live(browser, f"{site.url}/queues/q/bravo{at}/")
    notice = queue_page.get_by_test_id("queue-gone")
    await expect(notice).to_be_hidden()
    assert await asyncio.to_thread(listed, site) == [
        f"{q}{at}" for q in ("alpha", "bravo", "charlie")
    ]

    await asyncio.to_thread(pg_peer, "obliterate", "--queue", "bravo")
    await expect(notice).to_be_visible(timeout=GONE_WITHIN_MS)
    await expect(notice).to_contain_text("no longer exists")
    gone_row = overview.locator(f'tr[data-queue="bravo{at}"]')
    await expect(gone_row).to_have_count(0, timeout=GONE_WITHIN_MS)
    await expect(rows).to_have_count(2)
    await expect(overview.locator("#queue-count")).to_have_text("2")
    await expect(overview.locator('th[data-total="waiting"]')).to_have_text("4")
    assert await overview.evaluate(WAITING_SUMS) == {"total": 4, "rows": 4}
    assert await asyncio.to_thread(listed, site) == [f"alpha{at}", f"charlie{at}"]
    for page in (overview, queue_page):
        assert await page.evaluate("window.bullpenNoReload === true")
