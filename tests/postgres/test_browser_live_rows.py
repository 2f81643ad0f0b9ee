"""In Chromium: a Postgres queue's page and a job page follow a Node worker without a reload,
as they do for Redis queues (the rows, state, progress and log lines of BullMQ's event table)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from tests.support.live_reads import server_watches
from tests.support.peer import PostgresPeer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

# The worker reports 25, 50, 75 and 100 a step apart; the store's changes are read in passes,
# and a loaded machine's pass may come after two steps (25, then 75): a page shows the latest.
MOVED_ON = re.compile(r"^(50|75)$")


async def test_rows_and_job_page_follow_a_node_worker(
    pg_peer: PostgresPeer, pg_site: LiveServer, browser: Browser, redis_client: Any
) -> None:
    first = pg_peer("add", "--queue", "shop", "--name", "order", "--data", '{"sku": "<i>a</i>"}')
    page = await browser.new_page(viewport={"width": 1300, "height": 800})

    # The job page: state, progress and log lines move while a Node worker runs the job.
    await page.goto(f"{pg_site.url}/queues/q/shop@pg/jobs/{first['id']}/")
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    await page.evaluate("window.bullpenNoReload = true")
    await expect(page.locator('[data-testid="job-state"]')).to_have_text("waiting")
    await server_watches(redis_client, job=first["id"])
    work = asyncio.create_task(
        asyncio.to_thread(
            pg_peer, "work", "--queue", "shop", "--count", "1", "--progress", "--step-ms", "1500"
        )
    )
    bar = page.locator(".progress-live progress")
    await expect(page.locator('[data-testid="job-state"]')).to_have_text("active", timeout=15000)
    await expect(bar).to_have_attribute("value", MOVED_ON, timeout=15000)
    await expect(page.locator('[data-testid="job-state"]')).to_have_text("completed", timeout=20000)
    await expect(bar).to_have_attribute("value", "100")
    await expect(page.locator(".log-lines li")).to_have_count(4, timeout=5000)
    await work
    assert await page.evaluate("window.bullpenNoReload === true")

    # Another queue's active tab (a closing Node worker may take one more job of its queue):
    # the job's row arrives, its progress cell moves, and it leaves once completed; the
    # completed tab's count follows.
    second = pg_peer("add", "--queue", "ship", "--name", "parcel", "--data", '{"to": "<b>"}')
    await page.goto(f"{pg_site.url}/queues/q/ship@pg/?state=active")
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    await page.evaluate("window.bullpenNoReload = true")
    await expect(page.locator("#job-list tr[data-job-id]")).to_have_count(0)
    await server_watches(redis_client, queue="ship@pg")
    work = asyncio.create_task(
        asyncio.to_thread(
            pg_peer, "work", "--queue", "ship", "--count", "1", "--progress", "--step-ms", "1500"
        )
    )
    row = page.locator(f'#job-list tr[data-job-id="{second["id"]}"]')
    await expect(row).to_have_count(1, timeout=15000)
    await expect(row.locator(".progress-cell progress")).to_have_attribute(
        "value", MOVED_ON, timeout=15000
    )
    await expect(row).to_have_count(0, timeout=20000)
    await expect(page.locator('.tab[data-state="completed"] .count')).to_have_text("1")
    await work
    assert await page.evaluate("window.bullpenNoReload === true")
    assert pg_peer("job-status", "--queue", "ship", "--id", second["id"])["state"] == "completed"
