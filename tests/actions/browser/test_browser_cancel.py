"""In Chromium: Cancel on an active job's page; the embedded runner's handler is cancelled and
the page shows the job failed, with who cancelled it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import expect

from queues.runner import JobContext, Producer, QueueOptions, Registry
from tests.support.browser import chromium
from tests.support.browser_pages import answer_dialogs, operator_page
from tests.support.servers.live_server import LiveServer
from tests.support.worker_fixtures import Runners, wait_for

pytestmark = pytest.mark.browser


async def test_cancel_an_active_job_from_its_page(
    bullpen_server: LiveServer, chromium_path: str, runners: Runners, redis_client: Any
) -> None:
    registry = Registry()

    @registry.handler("thumbs", QueueOptions(attempts=3, backoff_ms=10))
    async def thumb(payload: Any, ctx: JobContext) -> None:
        await asyncio.sleep(60)

    async with Producer(registry) as producer:
        job_id = await producer.add("thumbs", "thumb", {"file": "<b>cat.png</b>"})
    await runners.start(registry)

    async def active() -> bool:
        return job_id in redis_client.lrange("bull:thumbs:active", 0, -1)

    await wait_for("the job to run", active)
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, f"/queues/q/thumbs/jobs/{job_id}/")
        answer_dialogs(page)
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("active")
        # An active job offers Cancel, and neither Remove nor Retry.
        await expect(page.locator('[data-testid="remove"]')).to_have_count(0)
        async with page.expect_navigation():
            await page.click('[data-testid="cancel"]')
        await expect(page.locator("#toast")).to_contain_text(f"Job {job_id} cancelled")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")
        await expect(page.get_by_text("Cancelled by operator from Bullpen").first).to_be_visible()
        await expect(page.locator('[data-testid="cancel"]')).to_have_count(0)
        await browser.close()
    assert redis_client.zscore("bull:thumbs:failed", job_id) is not None
