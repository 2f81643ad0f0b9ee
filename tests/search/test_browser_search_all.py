"""The header's one box and the search over every queue, in Chromium: from the overview a job's
exact id opens the job, text in job data and a JSON field's value find jobs in every queue,
grouped by queue with progress; then the matching failed jobs of one queue are retried in one
action (Node BullMQ checks exactly those moved), and the page works on a 390 px phone; axe-core
finds no serious or critical violation on it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.support.browser import chromium
from tests.support.browser_checks import RULES, axe_violations
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.search_reads import add_jobs
from tests.support.servers.live_server import LiveServer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser

OPERATOR = {"username": "operator", "password": "s3cret-pass"}


async def box_enter(page: Page, typed: str) -> None:
    box = page.get_by_label("Go to queue")
    await box.fill(typed)
    await box.press("Enter")


async def test_find_a_customers_jobs_everywhere_and_retry_the_failed_ones(
    peer: Peer, redis_server: RedisServer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    url = redis_server.url
    billing = await add_jobs(
        url,
        "billing",
        [{"name": "charge", "data": {"customer": "acme-42", "plan": "gold"}}] * 3
        + [{"name": "charge", "data": {"customer": "zeta-1", "plan": "gold"}}] * 2,
    )
    await asyncio.to_thread(peer, "work", "--queue", "billing", "--count", "5", "--fail")
    await add_jobs(
        url,
        "mail",
        [
            {"name": "welcome", "data": {"customer": "acme-42"}, "opts": {"jobId": "order-77"}},
            {"name": "welcome", "data": {"customer": "zeta-1"}},
        ],
    )
    errors: list[str] = []
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 1280, "height": 900},
        )
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        # Every message the page's websocket brings, recorded by the page itself.
        await page.add_init_script(
            "window.liveSeen = [];"
            "document.addEventListener('bullpen:live', e => window.liveSeen.push(e.detail));"
        )
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/")
        await expect(page.locator("h1")).to_contain_text("Queues")

        # An exact job id jumps to the job.
        await box_enter(page, "order-77")
        await expect(page).to_have_url(f"{bullpen_server.url}/queues/q/mail/jobs/order-77/")

        # Text in job data: every queue is searched, the results grouped by queue.
        await box_enter(page, "acme-42")
        await expect(page).to_have_url(f"{bullpen_server.url}/queues/search/?q=acme-42")
        progress = page.get_by_test_id("search-progress")
        await expect(progress).to_have_text("queues 2 of 2, 7 jobs read, 4 matches")
        groups = page.get_by_test_id("search-group")
        await expect(groups).to_have_count(2)
        billing_group = groups.filter(has=page.locator('h2 a[href="/queues/q/billing/"]'))
        await expect(billing_group.locator("tbody tr")).to_have_count(3)
        await expect(billing_group.locator("tbody tr .badge")).to_have_text(["failed"] * 3)
        mail_group = groups.filter(has=page.locator('h2 a[href="/queues/q/mail/"]'))
        await expect(mail_group.locator("tbody tr a")).to_have_text(["order-77"])
        await expect(billing_group.get_by_test_id("search-group-foot")).to_contain_text(
            "3 matches (3 failed) among 5 jobs read"
        )

        # A JSON field's value, in the failed jobs only (the state filter).
        await page.locator("#search-all-q").fill("data.plan = gold")
        for state in ("waiting", "active", "prioritized", "delayed", "waiting-children"):
            await page.get_by_label(state, exact=True).uncheck()
        for state in ("paused", "completed"):
            await page.get_by_label(state, exact=True).uncheck()
        await page.locator("#search-all-q").press("Enter")
        await expect(progress).to_have_text("queues 2 of 2, 5 jobs read, 5 matches")
        await expect(page).to_have_url(
            f"{bullpen_server.url}/queues/search/?q=data.plan+%3D+gold&state=failed"
        )
        await expect(groups).to_have_count(1)
        await expect(groups.locator("tbody tr")).to_have_count(5)

        # Back to the customer; retry exactly its failed jobs, by keyboard, after a count.
        await page.locator("#search-all-q").fill("data.customer = acme-42")
        await page.locator("#search-all-q").press("Enter")
        await expect(progress).to_have_text("queues 2 of 2, 5 jobs read, 3 matches")
        retry = billing_group.get_by_test_id("match-retry")
        await retry.focus()
        await page.keyboard.press("Enter")
        question = billing_group.get_by_test_id("match-question")
        await expect(question).to_have_text("Retry 3 matching failed jobs?")
        await expect(billing_group.get_by_test_id("match-go")).to_be_focused()
        # Asked, the page watches the queue: the server answers with its list.
        await page.wait_for_function(
            "window.liveSeen.some(m => m.type === 'list' && m.queue === 'billing')"
        )
        assert await axe_violations(page, RULES["light"]) == []
        await page.keyboard.press("Enter")
        await expect(page.get_by_test_id("toast")).to_contain_text("3 jobs retried")
        # The page's bar follows the action on the queue it does not show, to its end.
        await expect(page.get_by_test_id("bulk-label")).to_have_text("3 jobs retried")
        # Its progress came over the websocket, though the page watches no queue of its own.
        seen = await page.evaluate("window.liveSeen.filter(m => m.type === 'bulk')")
        assert any(m["queue"] == "billing" and m["action"] == "retry-matches" for m in seen), seen
        # The page runs the search again: the failed matches are gone.
        await expect(page.get_by_test_id("search-none")).to_be_visible()
        await expect(progress).to_have_text("queues 2 of 2, 2 jobs read, 0 matches")

        # On a phone: nothing scrolls sideways, and the results read as cards.
        phone = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 390, "height": 844},
            is_mobile=True,
            has_touch=True,
        )
        small = await phone.new_page()
        await small.goto(f"{bullpen_server.url}/queues/search/?q=acme-42")
        await expect(small.get_by_test_id("search-progress")).to_have_text(
            "queues 2 of 2, 7 jobs read, 4 matches"
        )
        fits = await small.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert fits, "the results page scrolls sideways on a phone"
        assert await axe_violations(small, RULES["phone"]) == []
        await phone.close()

        states: dict[str, Any] = (await asyncio.to_thread(peer, "inspect", "--queue", "billing"))[
            "jobs"
        ]
        assert set(states["waiting"]) == set(billing[:3])
        assert set(states["failed"]) == set(billing[3:])

        # The queue page's own search acts on its matches the same way.
        await page.goto(f"{bullpen_server.url}/queues/q/billing/?state=waiting&q=acme-42")
        await expect(page.locator('[data-testid="search-results"] tbody tr')).to_have_count(3)
        await page.get_by_test_id("match-remove").click()
        await expect(page.get_by_test_id("match-question")).to_have_text(
            "Remove 3 matching waiting jobs? This cannot be undone."
        )
        await page.get_by_test_id("match-go").click()
        await expect(page.get_by_test_id("toast")).to_contain_text("3 jobs removed")
        await browser.close()
    assert errors == []
    states = (await asyncio.to_thread(peer, "inspect", "--queue", "billing"))["jobs"]
    assert states["waiting"] == [] and set(states["failed"]) == set(billing[3:])
