"""In Chromium: sign in with basic credentials, retry a failed job from its page, see the audit;
retry every failed job and watch it happen."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_pages import OPERATOR, answer_dialogs, credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser


async def test_retry_a_failed_job_from_the_page(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    scenario = peer("scenario", "--queue", "shop")
    job_id = scenario["ids"]["failed"][0]
    async with chromium(chromium_path) as browser:
        # Without credentials the page is read-only: no button that would only be refused.
        anonymous = await browser.new_page()
        await anonymous.goto(f"{bullpen_server.url}/queues/q/shop/jobs/{job_id}/")
        await expect(anonymous.locator('[data-testid="sign-in-to-act"]')).to_be_visible()
        await expect(anonymous.locator('[data-testid="job-actions"] button')).to_have_count(0)
        assert redis_client.zscore("bull:shop:failed", job_id) is not None

        context = await browser.new_context(
            http_credentials={"username": "operator", "password": "s3cret-pass"}
        )
        page = await context.new_page()
        answer_dialogs(page)  # the job used its attempts: Retry asks before giving one more
        await page.goto(f"{bullpen_server.url}/queues/q/shop/jobs/{job_id}/")
        await page.click('[data-testid="sign-in"]')
        await expect(page.locator(".top .who")).to_have_text("operator")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")
        # The answer reloads the page (a live update may show the new state before that),
        # which confirms what the retry did.
        async with page.expect_navigation():
            await page.click('[data-testid="retry"]')
        await expect(page.locator("#toast")).to_contain_text(f"Job {job_id} retried")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("waiting")
        assert redis_client.zscore("bull:shop:failed", job_id) is None

        await page.goto(f"{bullpen_server.url}/queues/audit/")
        row = page.locator('[data-testid="audit"] tbody tr').first
        await expect(row).to_contain_text("retry")
        await expect(row).to_contain_text("operator")
        await expect(row).to_contain_text(job_id)
        await browser.close()
    with sqlite3.connect(bullpen_server.log.with_suffix(".sqlite3")) as db:
        rows = db.execute("select username, action, result from bullpen_auditentry").fetchall()
    assert ("operator", "retry", "ok") in rows


async def test_retry_all_shows_progress_then_the_count(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "40")
    peer("work", "--queue", "mail", "--count", "40", "--fail", "--concurrency", "20")
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        failed_tab = "/queues/q/mail/%3Fstate%3Dfailed"
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next={failed_tab}")
        await expect(page.locator(".top .who")).to_have_text("operator")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.get_by_role("button", name="Retry all failed").click()
        # The answer came at once; the bar and then the toast say what the action did.
        bar = page.get_by_test_id("bulk-progress")
        # A bulk action: on a loaded machine its end can take more than 5 s to arrive.
        await expect(bar).to_contain_text("40 jobs retried", timeout=20000)
        await expect(page.locator("#toast")).to_have_text("40 jobs retried")
        await expect(page.get_by_test_id("bulk-cancel")).to_be_hidden()
        await expect(page.locator('.tab[data-state="failed"] .count')).to_have_text("0")
        await expect(page.locator("tr[data-job-id]")).to_have_count(0)
        await browser.close()
    assert redis_client.zcard("bull:mail:failed") == 0
    assert redis_client.llen("bull:mail:wait") == 40
    with sqlite3.connect(bullpen_server.log.with_suffix(".sqlite3")) as db:
        rows = db.execute(
            "select count, status from bullpen_auditentry where action = 'retry-all' order by id"
        ).fetchall()
    assert rows == [(0, 202), (40, 200)]


async def test_clean_asks_with_its_grace_limit_and_count(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "3")
    peer("work", "--queue", "mail", "--count", "3")
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
        page = await context.new_page()
        completed_tab = "/queues/q/mail/%3Fstate%3Dcompleted"
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next={completed_tab}")
        await expect(page.locator("#live-status")).to_have_text("live")
        form = page.get_by_test_id("clean")
        await form.get_by_role("button", name="Clean…").click()
        question = page.get_by_test_id("clean-question")
        # The form's own values, and how many jobs they find: none is an hour old.
        await expect(question).to_have_text(
            "Remove up to 1,000 completed jobs older than 1 h? "
            "0 completed jobs are older than 1 h now. This cannot be undone."
        )
        await expect(page.get_by_test_id("clean-go")).to_have_count(0)
        await page.get_by_test_id("clean-dismiss").click()
        await expect(question).to_have_count(0)

        await page.get_by_test_id("clean-grace").fill("1 ms")
        await form.locator('input[name="limit"]').fill("2")
        await form.get_by_role("button", name="Clean…").click()
        await expect(question).to_have_text(
            "Remove up to 2 completed jobs older than 1 ms? "
            "3 completed jobs are older than 1 ms now. This cannot be undone."
        )
        await page.get_by_test_id("clean-go").click()
        bar = page.get_by_test_id("bulk-progress")
        await expect(bar).to_contain_text("2 jobs cleaned from completed", timeout=20000)
        assert redis_client.zcard("bull:mail:completed") == 1
        await browser.close()


async def test_a_second_retry_all_while_the_first_runs_says_so(
    peer: Peer, redis_server: RedisServer, chromium_path: str, tmp_path: Path, redis_client: Any
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "200")
    peer("work", "--queue", "mail", "--count", "200", "--fail", "--concurrency", "100")
    # Small, slow batches: the first retry-all runs for seconds.
    slow = {"BULLPEN_TEST_ACTIONS": json.dumps({"batch_size": 10, "pause_ms": 250})}
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", extra_env=slow)
    try:
        async with chromium(chromium_path) as browser:
            context = await browser.new_context(extra_http_headers=credentials_header(OPERATOR))
            page = await context.new_page()
            page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
            failed_tab = "/queues/q/mail/%3Fstate%3Dfailed"
            await page.goto(f"{server.url}/queues/sign-in?next={failed_tab}")
            await expect(page.locator("#live-status")).to_have_text("live")
            retry_all = page.get_by_role("button", name="Retry all failed")
            await retry_all.click()
            await expect(page.get_by_test_id("bulk-progress")).to_be_visible()
            await retry_all.click()
            toast = page.locator("#toast")
            await expect(toast).to_contain_text("is already")
            await expect(toast).to_contain_text("wait for it to end or cancel it")
            await browser.close()
    finally:
        stop_bullpen(server)
    assert redis_client.zcard("bull:mail:failed") + redis_client.llen("bull:mail:wait") == 200
