"""The overview in Chromium over two Redis servers, one of them stopped: the other's queues
are listed, each row with its connection, the stopped one is named as unreachable, and the
header says which one is down while the page stays live; a page of the stopped server's
queue says Redis is unreachable."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_checks import axe_violations
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser


@pytest.fixture
def us_server() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def two_server_site(
    redis_server: RedisServer, us_server: RedisServer, tmp_path: Path
) -> Iterator[LiveServer]:
    connections = {"eu": {"URL": redis_server.url}, "us": {"URL": us_server.url}}
    server = start_bullpen(
        redis_server.url,
        tmp_path / "daphne.log",
        {"BULLPEN_TEST_CONNECTIONS": json.dumps(connections)},
    )
    yield server
    stop_bullpen(server)


async def test_the_overview_with_one_of_two_servers_down(
    redis_server: RedisServer,
    us_server: RedisServer,
    two_server_site: LiveServer,
    chromium_path: str,
    tmp_path: Path,
) -> None:
    eu, us = Peer(redis_server.url), Peer(us_server.url)
    for peer, jobs in ((eu, 2), (us, 3)):
        for _ in range(jobs):
            peer("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    eu("add", "--queue", "billing", "--name", "invoice", "--data", "{}")

    async with chromium(chromium_path) as browser:
        # A site with a strict CSP blocks axe's inline script: the page bypasses it.
        page = await browser.new_page(viewport={"width": 1200, "height": 700}, bypass_csp=True)
        await page.goto(f"{two_server_site.url}/queues/")
        rows = page.locator("tr[data-queue]")
        await expect(rows).to_have_count(3)
        us_row = page.locator('tr[data-queue="mail@us"]')
        await expect(us_row.locator('[data-testid="connection"]')).to_have_text("us")
        await expect(us_row.locator('td[data-state="waiting"]')).to_have_text("3")
        await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
        # Grouped by connection: one group per server, with its queues' counts.
        await page.select_option('[data-testid="grouping"]', "connection")
        groups = page.locator('[data-testid="group"]')
        await expect(groups).to_have_count(2)
        await expect(groups.first).to_have_attribute("data-group", "eu")
        us_waiting = page.locator('[data-group="us"] td[data-group-state="waiting"]')
        eu_waiting = page.locator('[data-group="eu"] td[data-group-state="waiting"]')
        await expect(us_waiting).to_have_text("3")
        # Live counts add up under the right group.
        us("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
        await expect(us_waiting).to_have_text("4", timeout=15000)
        await expect(eu_waiting).to_have_text("3")
        # The grouping is remembered (the preferences cookie): a new load of the bare address is
        # grouped by connection too; then back to plain rows for what follows.
        await page.goto(f"{two_server_site.url}/queues/")
        await expect(groups).to_have_count(2)
        await page.select_option('[data-testid="grouping"]', "")
        await expect(groups).to_have_count(0)

        # A page of a queue on the server that stops says Redis is unreachable.
        await page.goto(f"{two_server_site.url}/queues/q/mail@us/")
        await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
        us_server.stop()
        await expect(page.locator("#live-status")).to_have_attribute(
            "data-state", "down", timeout=20000
        )

        await page.goto(f"{two_server_site.url}/queues/")
        await expect(rows).to_have_count(2)
        await expect(page.locator('tr[data-queue="mail@us"]')).to_have_count(0)
        eu_row = page.locator('tr[data-queue="mail@eu"]')
        await expect(eu_row.locator('[data-testid="connection"]')).to_have_text("eu")
        await expect(eu_row.locator('td[data-state="waiting"]')).to_have_text("2")
        notice = page.locator('[data-testid="unreachable"]')
        await expect(notice).to_have_count(1)
        await expect(notice).to_have_attribute("data-connection", "us")
        await expect(notice).to_contain_text("us")
        # The header names the stopped server; eu's figures are not greyed as stale.
        status = page.locator("#live-status")
        await expect(status).to_have_attribute("data-state", "partial", timeout=20000)
        await expect(status).to_contain_text("us")
        assert not await page.evaluate("document.body.classList.contains('stale')")

        # Live updates of the server still up go on.
        eu("add", "--queue", "mail", "--name", "late", "--data", "{}")
        await expect(eu_row.locator('td[data-state="waiting"]')).to_have_text("3", timeout=15000)
        # The notice, the labels and the header's state read right to assistive technology.
        assert await axe_violations(page, {}) == []
        await browser.close()


async def test_the_server_renders_totals_groups_and_new_queues_over_two_servers(
    redis_server: RedisServer,
    us_server: RedisServer,
    two_server_site: LiveServer,
    chromium_path: str,
) -> None:
    """Every figure the overview updates comes rendered from the server, summed over both
    servers' readers: the totals row, each group's figures, a row's count and its name for a
    screen reader; a queue created on either server while the page is open gets its row."""
    eu, us = Peer(redis_server.url), Peer(us_server.url)
    eu("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    us("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    us("add", "--queue", "billing", "--name", "invoice", "--data", "{}")

    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1200, "height": 700})
        await page.goto(f"{two_server_site.url}/queues/?group=connection")
        await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
        await page.evaluate("window.bullpenNoReload = true")
        total_waiting = page.locator('th[data-total="waiting"]')
        total_failed = page.locator('th[data-total="failed"]')
        us_group = page.locator('[data-group="us"]')
        await expect(total_waiting).to_have_text("3")
        await expect(us_group.locator('td[data-group-state="waiting"]')).to_have_text("2")

        # A job of us's mail moves from waiting to failed: the totals and us's figures follow.
        await asyncio.to_thread(us, "work", "--queue", "mail", "--count", "1", "--fail")
        await expect(total_failed).to_have_text("1", timeout=15000)
        await expect(total_waiting).to_have_text("2")
        await expect(us_group.locator('td[data-group-state="failed"]')).to_have_text("1")
        await expect(us_group.locator('td[data-group-state="waiting"]')).to_have_text("1")
        eu_group = page.locator('[data-group="eu"]')
        await expect(eu_group.locator('td[data-group-state="waiting"]')).to_have_text("1")

        # An opened group's row: its count and the link's name follow a job added on eu.
        await eu_group.locator(".group-toggle").click()
        row = page.locator('tr[data-queue="mail@eu"]')
        await expect(row).to_be_visible()
        await asyncio.to_thread(eu, "add", "--queue", "mail", "--name", "late", "--data", "{}")
        link = row.locator('td[data-state="waiting"] a')
        await expect(link).to_have_text("2", timeout=15000)
        await expect(link).to_have_attribute("aria-label", "2 waiting jobs in mail")
        await expect(total_waiting).to_have_text("3")

        # A queue created on us while the page is open: the list is fetched again, the eu
        # group stays open, and the count of queues says four.
        await asyncio.to_thread(us, "add", "--queue", "fresh", "--name", "a", "--data", "{}")
        await expect(page.locator('[data-testid="queue-count"]')).to_have_text("4", timeout=20000)
        await expect(us_group.locator('[data-testid="group-size"]')).to_contain_text("3")
        await expect(row).to_be_visible()
        await expect(total_waiting).to_have_text("4")
        assert await page.evaluate("window.bullpenNoReload === true")
        await browser.close()
