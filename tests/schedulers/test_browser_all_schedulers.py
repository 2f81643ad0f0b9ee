"""In Chromium: the schedulers page lists Node BullMQ's schedulers of every queue, the overdue
one first and red, and its Run now adds a job without moving the schedule."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.schedulers.test_all_schedulers import seed
from tests.support.browser_pages import answer_dialogs, chromium, operator_page
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_the_overdue_scheduler_comes_first_in_red_and_runs_now(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    await seed(peer)
    before = redis_client.zscore("bull:mail:repeat", "digest")
    waiting = redis_client.llen("bull:mail:wait")
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/")
        await page.get_by_test_id("nav-schedulers").click()
        await expect(page).to_have_url(f"{bullpen_server.url}/queues/schedulers/")
        rows = page.get_by_test_id("scheduler-row")
        await expect(rows).to_have_count(3)
        first = rows.first
        await expect(first).to_have_attribute("data-scheduler-id", "digest")
        await expect(first).to_have_attribute("data-overdue", "true")
        await expect(first.get_by_test_id("scheduler-overdue")).to_have_text("overdue")
        red = await first.get_by_test_id("scheduler-next").evaluate(
            "e => getComputedStyle(e).color"
        )
        calm = (
            await rows.nth(1)
            .get_by_test_id("scheduler-next")
            .evaluate("e => getComputedStyle(e).color")
        )
        assert red != calm
        red_channel, green, _blue = (int(v) for v in red[red.index("(") + 1 : -1].split(",")[:3])
        assert red_channel > 2 * green  # the theme's --bad
        await expect(rows.nth(1).get_by_test_id("scheduler-overdue")).to_have_count(0)
        await expect(first.get_by_test_id("scheduler-queue")).to_have_attribute(
            "href", "/queues/q/mail/"
        )
        await expect(first.get_by_test_id("next-job")).to_have_attribute(
            "href", f"/queues/q/mail/jobs/repeat:digest:{int(before)}/"
        )
        billing = page.locator('tr[data-queue="billing"]')
        await expect(billing.get_by_test_id("last-job")).to_have_text("completed")

        answer_dialogs(page)
        await first.get_by_test_id("run-scheduler").click()
        await expect(page.locator("#toast")).to_contain_text("Job scheduler digest ran now: job")
        await expect(page).to_have_url(f"{bullpen_server.url}/queues/schedulers/")

        # Edit, from the same shared form as the queue page's, lands back here too.
        billing = page.locator('tr[data-queue="billing"]')
        await billing.get_by_test_id("edit-scheduler").locator("summary").click()
        edit = billing.get_by_test_id("scheduler-form")
        await edit.get_by_label("Every").fill("2 h")
        await edit.get_by_role("button", name="Save").click()
        await expect(page.locator("#toast")).to_have_text("Job scheduler hourly updated")
        await expect(page.locator('tr[data-queue="billing"]')).to_contain_text("every 2 h")
    assert redis_client.llen("bull:mail:wait") == waiting + 1
    assert redis_client.zscore("bull:mail:repeat", "digest") == before
    assert redis_client.hget("bull:billing:repeat:hourly", "every") == str(2 * 3_600_000)
