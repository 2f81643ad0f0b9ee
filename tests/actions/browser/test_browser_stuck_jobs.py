"""In Chromium: stuck jobs are flagged in the active tab and on their page; one is given back
to the workers, the other moved to failed with a reason, each with its button, confirmed on
the page it lands on, and read by Node as moved."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.support.browser_pages import answer_dialogs, chromium, operator_page
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

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


@pytest.fixture
def quick_stuck_server(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose reader checks watched queues for stuck jobs every second (10 s by
    default)."""
    env = {"BULLPEN_TEST_LIVE": '{"stuck_interval": 1}'}
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", env)
    yield server
    stop_bullpen(server)


async def test_jobs_that_become_stuck_are_flagged_on_the_open_pages(
    peer: Peer, quick_stuck_server: LiveServer, chromium_path: str
) -> None:
    server = quick_stuck_server
    peer("add", "--queue", "mail", "--name", "send", "--data", "{}")
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, server, "/queues/q/mail/?state=active")
        await expect(page.locator("#live-status")).to_have_text("live")
        # A worker takes two jobs and dies: no event says their locks ran out a second later.
        stranding = asyncio.create_task(
            asyncio.to_thread(peer, "strand", "--queue", "mail", "--name", "send", "--count", "2")
        )
        rows = page.locator("#job-list tbody tr")
        await expect(rows).to_have_count(2)
        await expect(page.get_by_test_id("row-stuck")).to_have_count(0)
        first = await rows.first.get_attribute("data-job-id")
        job = await page.context.new_page()
        await job.goto(f"{server.url}/queues/q/mail/jobs/{first}/")
        await expect(job.locator("#live-status")).to_have_text("live")
        await stranding
        await expect(page.get_by_test_id("row-stuck")).to_have_count(2)
        await expect(job.get_by_test_id("job-stuck")).to_be_visible()
