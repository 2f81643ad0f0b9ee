"""A queue obliterated by a Node worker while pages show it: an open overview drops its row
and its counts from the totals and its group's figures, and an open queue page says the queue
is gone, all without a reload, though the server's scan of the keyspace is minutes away."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.support.browser_checks import WAITING_SUMS
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser

# Comfortably within what "a few seconds" means on a loaded machine (the reader's sweep of the
# keyspace takes a second here, its confirmation one round trip, the list one request), and
# well before the server's own scan (SCAN_KEPT_S).
GONE_WITHIN_MS = 30_000
SCAN_KEPT_S = 120


@pytest.fixture
def scanning_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    """A server that keeps its scan of the keyspace for minutes (a site: 30 s by default)."""
    server = start_bullpen(
        redis_server.url,
        tmp_path / "daphne.log",
        {"BULLPEN_TEST_DISCOVERY_INTERVAL": str(SCAN_KEPT_S)},
    )
    yield server
    stop_bullpen(server)


async def add_jobs(peer: Peer, queue: str, n: int) -> None:
    for _ in range(n):
        await asyncio.to_thread(peer, "add", "--queue", queue, "--name", "n", "--data", "{}")


async def obliterate(peer: Peer, queue: str) -> None:
    await asyncio.to_thread(peer, "obliterate", "--queue", queue)


async def open_live(page: Page, url: str) -> None:
    await page.goto(url)
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    await page.evaluate("window.bullpenNoReload = true")


async def test_an_obliterated_queue_leaves_the_open_pages_without_a_reload(
    browser: Browser, scanning_server: LiveServer, peer: Peer
) -> None:
    for queue, n in (("alpha", 1), ("bravo", 2), ("t1-a", 1), ("t1-b", 3)):
        await add_jobs(peer, queue, n)
    page = await browser.new_page(viewport={"width": 1300, "height": 900})
    await open_live(page, scanning_server.url + "/queues/")
    rows = page.locator("#overview-rows tr[data-queue]")
    await expect(rows).to_have_count(4)
    assert await page.evaluate(WAITING_SUMS) == {"total": 7, "rows": 7}

    await obliterate(peer, "bravo")
    await expect(page.locator('tr[data-queue="bravo"]')).to_have_count(0, timeout=GONE_WITHIN_MS)
    await expect(rows).to_have_count(3)
    await expect(page.locator("#queue-count")).to_have_text("3")
    total = page.locator('th[data-total="waiting"]')
    await expect(total).to_have_text("5")
    assert await page.evaluate(WAITING_SUMS) == {"total": 5, "rows": 5}
    assert await page.evaluate("window.bullpenNoReload === true")

    # Grouped, with the group open: the queue leaves the group's rows and its figures.
    await open_live(page, scanning_server.url + "/queues/?group=head")
    group = page.locator('tbody.group[data-group="t1"]')
    await group.locator(".group-toggle").click()
    await expect(group.locator("tr[data-queue]")).to_have_count(2)
    figure = group.locator('td[data-group-state="waiting"]')
    await expect(figure).to_have_text("4")
    await obliterate(peer, "t1-b")
    await expect(group.locator("tr[data-queue]")).to_have_count(1, timeout=GONE_WITHIN_MS)
    await expect(figure).to_have_text("1")
    await expect(group).not_to_have_class(re.compile(r"\bcollapsed\b"))
    await expect(total).to_have_text("2")
    assert await page.evaluate("window.bullpenNoReload === true")

    # A queue page of a queue obliterated: it says so, and where to go.
    await open_live(page, scanning_server.url + "/queues/q/alpha/")
    notice = page.get_by_test_id("queue-gone")
    await expect(notice).to_be_hidden()
    await obliterate(peer, "alpha")
    await expect(notice).to_be_visible(timeout=GONE_WITHIN_MS)
    await expect(notice).to_contain_text("no longer exists")
    assert await page.evaluate("window.bullpenNoReload === true")
