"""In Chromium: stuck jobs are flagged in the active tab and on their page; one is given back
to the workers, the other moved to failed with a reason, each with its button, confirmed on
the page it lands on, and read by Node as moved."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import expect

from tests.support.browser_pages import answer_dialogs, chromium, operator_page
from tests.support.live_server import LiveServer
from tests.support.peer import Peer

pytestmark = pytest.mark.browser


async def test_move_stuck_jobs_to_wait_and_to_failed(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    ids = peer("strand", "--queue", "mail", "--name", "send", "--count", "2")["ids"]
    back, failing = str(ids[0]), str(ids[1])
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/mail/?state=active")
        await expect(page.get_by_test_id("row-stuck")).to_have_count(2)
        answer_dialogs(page)

        await page.goto(f"{bullpen_server.url}/queues/q/mail/jobs/{back}/")
        await expect(page.get_by_test_id("job-stuck")).to_be_visible()
        await page.get_by_test_id("move-to-wait").click()
        await expect(page.locator("#toast")).to_have_text(
            f"Job {back} given back to the workers (waiting)"
        )
        await expect(page.get_by_test_id("job-state")).to_have_text("waiting")
        await expect(page.get_by_test_id("job-stuck")).to_have_count(0)

        await page.goto(f"{bullpen_server.url}/queues/q/mail/jobs/{failing}/")
        form = page.get_by_test_id("move-to-failed")
        await form.get_by_label("Reason").fill("host lost <b>power</b>")
        await form.get_by_role("button", name="Move to failed").click()
        await expect(page.locator("#toast")).to_have_text(f"Job {failing} moved to failed")
        await expect(page.get_by_test_id("job-state")).to_have_text("failed")
        await expect(page.locator('[data-field="failedReason"]')).to_have_text(
            "host lost <b>power</b>"
        )
    seen = await asyncio.to_thread(peer, "inspect", "--queue", "mail", "--ids", f"{back},{failing}")
    assert seen["details"][back]["state"] == "waiting"
    assert seen["details"][failing]["state"] == "failed"
    assert seen["details"][failing]["failedReason"] == "host lost <b>power</b>"
