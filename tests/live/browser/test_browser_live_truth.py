"""In Chromium: the header's live pill and the overview's rows say only what the server has
confirmed, from a start with Redis away to a busy queue and a queue created while a page is open."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.support.peer import PEER, Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer, free_port

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
    # Its own Node process, ended once the page has shown what it must.
    work = await asyncio.create_subprocess_exec(
        "node",
        str(PEER),
        "work",
        *peer.connection_flags(),
        *("--queue", "busy", "--count", "400", "--delay-ms", "60", "--timeout-ms", "80000"),
        stdout=asyncio.subprocess.DEVNULL,
    )
    try:
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
        assert work.returncode is None, "the queue went quiet before the page could show it live"
        await expect(page.locator("body")).not_to_have_class(re.compile(r"\bstale\b"))
    finally:
        work.kill()
        await work.wait()


@pytest.fixture
def scanning_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    """A server that keeps its scan of the keyspace for 30 s, as a site does by default."""
    env = {"BULLPEN_TEST_DISCOVERY_INTERVAL": "30"}
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", env)
    yield server
    stop_bullpen(server)


async def add_job(peer: Peer, queue: str) -> None:
    await asyncio.to_thread(peer, "add", "--queue", queue, "--name", "n", "--data", "{}")


async def rows_add_up(page: Page) -> None:
    """The "All queues" waiting total is the sum of the rows' (every row is on the page)."""
    await page.wait_for_function(
        """() => {
          const n = el => Number(el.textContent.replace(/\\D/g, "") || 0);
          const cells = [...document.querySelectorAll('tr[data-queue] td[data-state="waiting"]')];
          const total = document.querySelector('th[data-total="waiting"]');
          return total && n(total) === cells.reduce((sum, cell) => sum + n(cell), 0);
        }"""
    )


async def test_new_queue_gets_its_row_live_in_place(
    browser: Browser, scanning_server: LiveServer, peer: Peer, tmp_path: Path
) -> None:
    for queue in ("alpha", "charlie", "t1-a", "t2-a"):
        await add_job(peer, queue)
    page = await recording_page(browser)
    await page.goto(scanning_server.url + "/queues/")
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    rows = page.locator("#overview-rows tr[data-queue]")
    await expect(rows).to_have_count(4)
    await page.evaluate("window.bullpenNoReload = true")

    # Node writes a queue nobody has seen: its row comes (within 2 s on a quiet machine; how
    # soon is measured in bench/, not here), where the order puts it, and the totals stay the
    # sum of the rows.
    await add_job(peer, "bravo")
    await expect(rows.nth(1)).to_have_attribute("data-queue", "bravo")
    slugs = await rows.evaluate_all("rows => rows.map(row => row.dataset.queue)")
    assert slugs == ["alpha", "bravo", "charlie", "t1-a", "t2-a"]
    await expect(page.locator('tr[data-queue="bravo"] td[data-state="waiting"]')).to_have_text("1")
    await rows_add_up(page)
    # The API lists it too, though the next scan is 30 s away.
    listed = await page.request.get(scanning_server.url + "/queues/api/queues/")
    assert "bravo" in [queue["name"] for queue in (await listed.json())["queues"]]
    assert await page.evaluate("window.bullpenNoReload === true")

    # Grouped, with a group opened: a new queue of that group appears among its rows, and the
    # group stays open.
    await page.goto(scanning_server.url + "/queues/?group=head")
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    group = page.locator('tbody.group[data-group="t1"]')
    await group.locator(".group-toggle").click()
    await expect(group.locator("tr[data-queue]")).to_have_count(1)
    await add_job(peer, "t1-b")
    await expect(group.locator("tr[data-queue]")).to_have_count(2)
    await expect(group.locator("tr[data-queue]").nth(1)).to_have_attribute("data-queue", "t1-b")
    await expect(group).not_to_have_class(re.compile(r"\bcollapsed\b"))
    await expect(group.locator('td[data-group-state="waiting"]')).to_have_text("2")
