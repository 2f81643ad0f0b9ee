"""In Chromium: a job's page after the job is gone, and retrying a job that used its attempts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

OPERATOR = {"username": "operator", "password": "s3cret-pass"}


async def test_back_after_remove_shows_the_removed_page(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    job_id = str(peer("add", "--queue", "mail", "--name", "welcome", "--data", "{}")["id"])
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        job_url = f"{bullpen_server.url}/queues/q/mail/jobs/{job_id}/"
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/q/mail/")
        await expect(page.locator(".top .who")).to_have_text("operator")
        await page.goto(job_url)
        await page.get_by_test_id("remove").click()
        await page.wait_for_url(f"{bullpen_server.url}/queues/q/mail/*")
        assert not redis_client.exists(f"bull:mail:{job_id}")
        await page.go_back()
        await page.wait_for_url(job_url)
        removed = page.get_by_test_id("job-removed")
        await expect(removed).to_contain_text("This job no longer exists")
        await removed.get_by_role("link", name="Back to mail").click()
        await page.wait_for_url(f"{bullpen_server.url}/queues/q/mail/")
        await browser.close()


async def test_retry_with_fresh_attempts_from_the_job_page(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    job_id = str(
        peer("add", "--queue", "mail", "--name", "send", "--opts", '{"attempts": 2}')["id"]
    )
    assert peer("work", "--queue", "mail", "--count", "1", "--fail")["failed"] == 1
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
        page = await context.new_page()
        confirms: list[str] = []

        async def accept(dialog: Any) -> None:
            confirms.append(dialog.message)
            await dialog.accept()

        page.on("dialog", accept)
        job_url = f"/queues/q/mail/jobs/{job_id}/"
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next={job_url}")
        await expect(page.locator(".top .who")).to_have_text("operator")
        await expect(page.get_by_test_id("attempts-used")).to_contain_text("(2 of 2)")
        await page.get_by_test_id("retry-fresh").click()
        await expect(page.get_by_test_id("job-state")).to_have_text("waiting")
        await expect(page.locator('[data-field="attemptsMade"]')).to_have_text("0 of 2")
        await expect(page.locator("#toast")).to_contain_text(
            f"Job {job_id} retried with fresh attempts: up to 2"
        )
        await expect(page.get_by_test_id("attempts-used")).to_have_count(0)
        assert confirms == [f"Retry job {job_id} with fresh attempts: up to 2 again?"]
        await browser.close()
    seen = peer("inspect", "--queue", "mail", "--ids", job_id)["details"][job_id]
    assert (seen["state"], seen["attemptsMade"], seen["attemptsStarted"]) == ("waiting", 0, 0)


async def test_a_click_before_the_page_is_ready_is_not_lost(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    """On a slow phone the Retry button is on screen before its script binds it: a tap then
    waits for the page (the button takes no click until it works) instead of doing nothing."""
    job_id = str(peer("add", "--queue", "mail", "--name", "send", "--data", "{}")["id"])
    assert peer("work", "--queue", "mail", "--count", "1", "--fail")["failed"] == 1
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
        page = await context.new_page()
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/q/mail/")
        await expect(page.locator(".top .who")).to_have_text("operator")

        async def slow_script(route: Any) -> None:
            await asyncio.sleep(1.5)  # a deferred script holds the page's scripts back
            await route.continue_()

        await page.route("**/bullpen/search*.js", slow_script)
        await page.goto(f"{bullpen_server.url}/queues/q/mail/jobs/{job_id}/", wait_until="commit")
        await expect(page.get_by_test_id("retry")).to_be_visible()
        # Parsed, its deferred scripts not run yet: htmx has not bound the button.
        assert await page.evaluate("document.readyState") != "complete"
        assert not await page.evaluate("document.documentElement.classList.contains('htmx-ready')")
        async with page.expect_navigation():  # the answer reloads the page
            await page.get_by_test_id("retry").click()
        await expect(page.locator("#toast")).to_contain_text(f"Job {job_id} retried")
        await browser.close()
    assert redis_client.zscore("bull:mail:failed", job_id) is None
