"""In Chromium: a site with a Redis connection and a Postgres store lists both stores' queues
with their counts, stays live (the live reader follows the Redis one), and opens a Postgres
queue's failed tab and a job page."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, expect

from tests.support.browser_pages import OPERATOR, answer_dialogs, credentials_header
from tests.support.peer import Peer, PostgresPeer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_overview_and_pages_of_a_postgres_queue(
    pg_peer: PostgresPeer, peer: Peer, pg_site: LiveServer, browser: Browser
) -> None:
    pg_peer("scenario", "--queue", "shop")
    peer("add", "--queue", "mail", "--name", "welcome", "--data", "{}")
    page = await browser.new_page(viewport={"width": 1200, "height": 800})
    await page.goto(f"{pg_site.url}/queues/")
    await expect(page.locator("tr[data-queue]")).to_have_count(4)
    shop = page.locator('tr[data-queue="shop@pg"]')
    await expect(shop.locator('[data-testid="connection"]')).to_have_text("pg")
    await expect(shop.locator('td[data-state="failed"]')).to_have_text("2")
    await expect(shop.locator('td[data-state="prioritized"]')).to_have_text("3")
    mail = page.locator('tr[data-queue="mail@main"]')
    await expect(mail.locator('td[data-state="waiting"]')).to_have_text("1")
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")

    await page.goto(f"{pg_site.url}/queues/q/shop@pg/?state=failed")
    await expect(page.get_by_text("card declined: 0000").first).to_be_visible()
    await page.goto(f"{pg_site.url}/queues/q/shop@pg/jobs/charge-9/")
    await expect(page.get_by_text("attempt 3: charging card 0000")).to_be_visible()


async def test_retry_from_the_job_page_and_retry_all_from_the_failed_tab(
    pg_peer: PostgresPeer, pg_site: LiveServer, browser: Browser
) -> None:
    scenario = pg_peer("scenario", "--queue", "shop")
    other = next(job_id for job_id in scenario["ids"]["failed"] if job_id != "charge-9")
    context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
    page = await context.new_page()
    answer_dialogs(page)  # the job used its attempts: Retry asks before giving one more
    await page.goto(f"{pg_site.url}/queues/sign-in?next=/queues/q/shop@pg/jobs/charge-9/")
    await expect(page.locator(".top .who")).to_have_text("operator")
    await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")
    async with page.expect_navigation():
        await page.click('[data-testid="retry"]')
    await expect(page.locator("#toast")).to_contain_text("Job charge-9 retried")
    await expect(page.locator('[data-testid="job-state"]')).to_have_text("waiting")
    assert pg_peer("job-status", "--queue", "shop", "--id", "charge-9")["state"] == "waiting"

    await page.goto(f"{pg_site.url}/queues/q/shop@pg/?state=failed")
    await page.get_by_role("button", name="Retry all failed").click()
    await expect(page.locator("#toast")).to_contain_text("1 job retried")
    assert pg_peer("job-status", "--queue", "shop", "--id", other)["state"] == "waiting"


async def test_counts_of_a_postgres_queue_move_live(
    pg_peer: PostgresPeer, pg_site: LiveServer, browser: Browser
) -> None:
    pg_peer("add", "--queue", "shop", "--name", "order", "--data", "{}")
    page = await browser.new_page(viewport={"width": 1200, "height": 800})
    await page.goto(f"{pg_site.url}/queues/")
    waiting = page.locator('tr[data-queue="shop@pg"] td[data-state="waiting"]')
    await expect(waiting).to_have_text("1")
    await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    # Node adds and works jobs; the overview follows without a reload.
    pg_peer("add-bulk", "--queue", "shop", "--name", "order", "--count", "4")
    await expect(waiting).to_have_text("5")
    pg_peer("work", "--queue", "shop", "--count", "5")
    await expect(waiting).to_have_text("0")
    await expect(page.locator('tr[data-queue="shop@pg"] td[data-state="completed"]')).to_have_text(
        "5"
    )
    # A queue page's tab counts follow too.
    queue_page = await browser.new_page()
    await queue_page.goto(f"{pg_site.url}/queues/q/shop@pg/")
    await expect(queue_page.locator('.tab[data-state="waiting"] .count')).to_have_text("0")
    pg_peer("add", "--queue", "shop", "--name", "order", "--data", "{}")
    await expect(queue_page.locator('.tab[data-state="waiting"] .count')).to_have_text("1")
