"""In Chromium: every action from a page lands on a page that tells the truth and confirms what
was done; signing out (basic credentials, a session) leaves read-only pages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.async_api import BrowserContext, Page, Route, expect

from tests.support.browser_pages import (
    _create_superuser,
    answer_dialogs,
    chromium,
    operator_page,
    settled,
    socket_messages,
)
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser


async def expect_read_only(page: Page) -> None:
    await expect(page.locator('[data-testid="sign-in"]')).to_be_visible()
    await expect(page.locator('[data-testid="sign-out"]')).to_have_count(0)
    await expect(page.locator(".top .who")).to_have_count(0)
    await expect(page.locator("[hx-post]")).to_have_count(0)


async def test_remove_from_the_job_page_lands_on_its_tab(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    scenario = peer("scenario", "--queue", "shop")
    job_id = scenario["ids"]["failed"][1]
    other = scenario["ids"]["failed"][0]
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, f"/queues/q/shop/jobs/{job_id}/")
        answer_dialogs(page)
        await page.click('[data-testid="remove"]')
        await page.wait_for_url(f"{bullpen_server.url}/queues/q/shop/?state=failed")
        toast = page.locator("#toast")
        await expect(toast).to_have_text(f"Job {job_id} removed")
        await expect(toast).to_have_attribute("role", "status")
        await expect(page.locator(".tab.current")).to_have_attribute("data-state", "failed")
        await expect(page.locator(f'tr[data-job-id="{other}"]')).to_have_count(1)
        await expect(page.locator(f'tr[data-job-id="{job_id}"]')).to_have_count(0)
        # The confirmation is said once: a reload does not repeat it.
        await page.reload()
        await expect(page.locator("#toast")).to_be_hidden()
    assert not redis_client.exists(f"bull:shop:{job_id}")
    assert redis_client.zscore("bull:shop:failed", job_id) is None


async def test_a_queues_list_stays_where_it_showed(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    # A firing alert and the throughput chart sit above the list; they come with the page, so
    # a click aimed at a row as the list shows lands on that row.
    peer("scenario", "--queue", "shop")
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/")
        await page.goto(
            f"{bullpen_server.url}/queues/q/shop/?state=completed", wait_until="domcontentloaded"
        )
        row = page.locator("tr[data-job-id]").first
        shown = await row.bounding_box()
        await expect(page.locator('[data-testid="throughput"]')).to_be_visible()
        await expect(page.locator('[data-testid="queue-alerts"]')).to_be_attached()
        await page.wait_for_load_state("networkidle")
        assert shown is not None and await row.bounding_box() == shown


async def test_a_failed_tabs_list_stays_where_it_showed(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    # The failure groups sit above the failed list: they come with the page, or later into a
    # closed fold, so a click aimed at a row as the list shows lands on that row.
    errors = ["SMTP timeout after 3000 ms", "template 'welcome' not found", "quota exceeded"]
    for index, message in enumerate(errors * 2):
        data = json.dumps({"error": message})
        peer("add", "--queue", "email", "--name", f"send-{index}", "--data", data)
    peer("work", "--queue", "email", "--count", str(len(errors) * 2), "--fail")
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/")
        await page.goto(
            f"{bullpen_server.url}/queues/q/email/?state=failed", wait_until="domcontentloaded"
        )
        row = page.locator("tr[data-job-id]").first
        shown = await row.bounding_box()
        groups = page.locator('[data-testid="failure-groups"]')
        await expect(groups.locator("tbody tr")).to_have_count(len(errors))
        await expect(page.locator('[hx-trigger="load"]')).to_have_count(0)
        await page.wait_for_load_state("networkidle")
        assert shown is not None and await row.bounding_box() == shown


async def test_failure_groups_that_come_late_load_into_a_closed_fold(
    peer: Peer, redis_server: RedisServer, chromium_path: str, tmp_path: Path
) -> None:
    # A server that never waits for the groups: as when their scan outlasts the page's wait.
    never = {"BULLPEN_TEST_EXTRA": json.dumps({"FAILURE_GROUPS_WAIT": 0})}
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", extra_env=never)
    peer("add-bulk", "--queue", "email", "--name", "send", "--count", "4")
    peer("work", "--queue", "email", "--count", "4", "--fail")
    try:
        async with chromium(chromium_path) as browser:
            page = await operator_page(browser, server, "/queues/")
            await page.goto(
                f"{server.url}/queues/q/email/?state=failed", wait_until="domcontentloaded"
            )
            row = page.locator("tr[data-job-id]").first
            shown = await row.bounding_box()
            fold = page.get_by_test_id("groups-fold")
            groups = fold.get_by_test_id("failure-groups")
            await expect(groups).to_be_attached()
            await page.wait_for_load_state("networkidle")
            assert shown is not None and await row.bounding_box() == shown
            await expect(groups).to_be_hidden()
            await fold.locator("summary").click()
            await expect(groups.locator("tbody tr")).to_have_count(1)
            await expect(groups.locator("tbody tr .count")).to_have_text("4")
    finally:
        stop_bullpen(server)


async def test_bulk_remove_and_group_remove_land_on_the_refreshed_list(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    scenario = peer("scenario", "--queue", "shop")
    completed = scenario["ids"]["completed"]
    errors = ["SMTP timeout after 3000 ms"] * 3 + ["template 'welcome' not found"]
    for index, message in enumerate(errors):
        peer(
            "add",
            "--queue",
            "email",
            "--name",
            f"send-{index}",
            "--data",
            json.dumps({"error": message}),
        )
    peer("work", "--queue", "email", "--count", str(len(errors)), "--fail", "--concurrency", "2")
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/")
        answer_dialogs(page)
        listed = socket_messages(page, "list")
        await page.goto(f"{bullpen_server.url}/queues/q/shop/?state=completed")
        await settled(page, listed)
        for job_id in completed:
            await page.check(f'tr[data-job-id="{job_id}"] .job-select')
        await page.click('[data-testid="bulk-remove"]')
        await expect(page.locator("#toast")).to_have_text("2 jobs removed")
        await expect(page.locator('.tab[data-state="completed"] .count')).to_have_text("0")
        await expect(page.locator("tr[data-job-id]")).to_have_count(0)
        assert page.url.endswith("/queues/q/shop/?state=completed")
        assert redis_client.zcard("bull:shop:completed") == 0

        listed = socket_messages(page, "list")
        await page.goto(f"{bullpen_server.url}/queues/q/email/?state=failed")
        groups = page.locator('[data-testid="failure-groups"] tbody tr')
        await expect(groups).to_have_count(2)
        await settled(page, listed)
        smtp = groups.filter(has_text="SMTP timeout")
        # The answer is held back until a live update has replaced the button that asked:
        # the page must still follow the action it started.
        replaced = asyncio.Event()

        async def answer_late(route: Route) -> None:
            response = await route.fetch()
            await asyncio.wait_for(replaced.wait(), 20)
            await route.fulfill(response=response)

        await page.route("**/remove-group/", answer_late)
        button = smtp.locator('[data-testid="remove-group"]')
        handle = await button.element_handle()
        assert handle is not None
        await button.click()
        await page.wait_for_function("button => !button.isConnected", arg=handle, timeout=20000)
        replaced.set()
        # A group's removal runs as a bulk action: the page follows it to its end, which
        # on a loaded machine (the suite runs in two processes) can take more than 5 s.
        await expect(page.locator("#toast")).to_have_text("3 jobs removed", timeout=20000)
        await expect(groups).to_have_count(1)
        await expect(groups.first).to_contain_text("template")
        await expect(page.locator('.tab[data-state="failed"] .count')).to_have_text("1")
        await expect(page.locator("tr[data-job-id]")).to_have_count(1)
    assert redis_client.zcard("bull:email:failed") == 1


async def test_obliterate_lands_on_the_overview(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    peer("scenario", "--queue", "shop")
    assert redis_client.keys("bull:shop-paused:*")
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/shop-paused/")
        answer_dialogs(page, prompt_text="shop-paused")
        await page.click('[data-testid="obliterate"]')
        await page.wait_for_url(f"{bullpen_server.url}/queues/")
        await expect(page.locator("#toast")).to_have_text("Queue shop-paused obliterated")
        await expect(page.locator('tr[data-queue="shop"]')).to_have_count(1)
        await expect(page.locator('tr[data-queue="shop-paused"]')).to_have_count(0)
    assert redis_client.keys("bull:shop-paused:*") == []


async def test_crafted_confirmations_say_nothing(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    hostile = "<img src=x onerror=window.pwned=1>"
    peer("add", "--queue", "mail", "--name", "n", "--opts", json.dumps({"jobId": hostile}))
    peer("add", "--queue", "mail", "--name", "n")
    crafted = quote("<img src=x onerror=window.pwned=1>Queue mail obliterated")
    async with chromium(chromium_path) as browser:
        # A link (and cookies) made elsewhere: the page says nothing, runs nothing.
        context: BrowserContext = await browser.new_context()
        host = bullpen_server.url.removeprefix("http://")
        await context.add_cookies(
            [
                {"name": name, "value": crafted, "domain": host.split(":")[0], "path": "/"}
                for name in ("bullpen_notice", "messages")
            ]
        )
        visitor = await context.new_page()
        await visitor.goto(
            f"{bullpen_server.url}/queues/?notice={crafted}&message={crafted}&toast={crafted}"
        )
        await expect(visitor.locator('tr[data-queue="mail"]')).to_have_count(1)
        await expect(visitor.locator("#toast")).to_be_hidden()
        await expect(visitor.locator("body")).not_to_contain_text("obliterated")
        assert await visitor.evaluate("window.pwned") is None

        # A real confirmation naming a hostile job id shows it as text.
        page = await operator_page(
            browser, bullpen_server, f"/queues/q/mail/jobs/{quote(hostile, safe='')}/"
        )
        answer_dialogs(page)
        await page.click('[data-testid="remove"]')
        await page.wait_for_url("**/queues/q/mail/?state=waiting")
        await expect(page.locator("#toast")).to_have_text(f"Job {hostile} removed")
        await expect(page.locator("#toast img")).to_have_count(0)
        assert await page.evaluate("window.pwned") is None


async def test_sign_out_of_basic_credentials(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    peer("scenario", "--queue", "shop")
    async with chromium(chromium_path) as browser:
        page = await operator_page(
            browser, bullpen_server, "/queues/q/shop/?state=failed", prompted=True
        )
        await expect(page.locator('[data-testid="queue-actions"] button').first).to_be_visible()
        await page.click('[data-testid="sign-out"]')
        await page.wait_for_url(f"{bullpen_server.url}/queues/")
        await expect_read_only(page)
        await page.goto(f"{bullpen_server.url}/queues/q/shop/?state=failed")
        await expect(page.locator('[data-testid="failure-groups"] tbody tr')).to_have_count(1)
        await expect(page.locator('[data-testid="sign-in-to-act"]')).to_be_visible()
        await expect_read_only(page)
        await expect(page.locator(".job-select")).to_have_count(0)
        # What the browser now sends with a page's request no longer acts.
        status = await page.evaluate(
            """() => fetch("/queues/api/queues/shop/pause/",
                           {method: "POST", headers: {"HX-Request": "true"}}).then(r => r.status)"""
        )
        assert status == 401
        assert redis_client.hget("bull:shop:meta", "paused") is None
        # Signing in again works (the browser is asked for credentials afresh).
        await page.click('[data-testid="sign-in"]')
        await expect(page.locator(".top .who")).to_have_text("operator")
        await expect(page.locator('[data-testid="queue-actions"] button').first).to_be_visible()


async def test_session_user_signs_out_through_django_logout(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    peer("scenario", "--queue", "shop")
    _create_superuser(bullpen_server, "ada", "correct horse battery")
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        await page.goto(f"{bullpen_server.url}/admin/login/?next=/queues/q/shop/%3Fstate%3Dfailed")
        await page.fill("#id_username", "ada")
        await page.fill("#id_password", "correct horse battery")
        await page.click('input[type="submit"]')
        await page.wait_for_url("**/queues/q/shop/?state=failed")
        await expect(page.locator(".top .who")).to_have_text("ada")
        await expect(
            page.locator('[data-testid="failure-groups"] [data-testid="retry-group"]')
        ).to_have_count(1)
        sign_out = page.locator("form.sign-out")
        await expect(sign_out).to_have_attribute("action", "/admin/logout/")
        await page.click('[data-testid="sign-out"]')
        await page.wait_for_url(f"{bullpen_server.url}/queues/")
        await expect_read_only(page)
        await page.goto(f"{bullpen_server.url}/queues/q/shop/?state=failed")
        await expect(page.locator('[data-testid="failure-groups"] tbody tr')).to_have_count(1)
        await expect_read_only(page)
        cookies = {c["name"] for c in await page.context.cookies()}
        assert "sessionid" not in cookies
