"""In Chromium: details a person sees on the way, each checked where it shows."""

# ruff: noqa: F811 - the site fixture imported from tests.test_browser_security

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import ConsoleMessage, expect

from tests.auth.test_browser_security import site  # noqa: F401
from tests.support.browser import chromium
from tests.support.browser_checks import RECORD_VIOLATIONS, SIGNED_IN
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.shared_server]

OPERATOR = {"username": "operator", "password": "s3cret-pass"}


async def test_no_csp_violation_on_the_search_and_job_pages(
    peer: Peer, site: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    # The standalone site, under its strict Content-Security-Policy (no inline style).
    scenario = peer("scenario", "--queue", "shop")
    failed = scenario["ids"]["failed"][0]
    completed = scenario["ids"]["completed"][0]
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(extra_http_headers=credentials_header(SIGNED_IN))
        page = await context.new_page()
        await page.add_init_script(RECORD_VIOLATIONS)
        console: list[str] = []

        def heard(message: ConsoleMessage) -> None:
            if "Content Security Policy" in message.text:
                console.append(message.text)

        page.on("console", heard)
        pages = [
            "/queues/search/?q=card",
            "/queues/q/shop/?state=failed&q=card",
            f"/queues/q/shop/jobs/{failed}/",
            f"/queues/q/shop/jobs/{completed}/",
            "/queues/q/shop/jobs/long-1/",
        ]
        seen: dict[str, list[str]] = {}
        for path in pages:
            await page.goto(site.url + path)
            await expect(page.locator("#live-status")).to_have_text("live")
            await page.wait_for_load_state("networkidle")
            found = await page.evaluate("window.__violations")
            if found:
                seen[path] = found
        assert seen == {} and console == [], json.dumps([seen, console], indent=1)[:3000]
        await browser.close()


async def test_find_by_id_lists_each_match_with_its_state(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    for queue in ("mail", "sms"):
        peer("add", "--queue", queue, "--name", "send", "--opts", '{"jobId": "order-42"}')
    peer("work", "--queue", "sms", "--count", "1")
    async with chromium(chromium_path) as browser:
        page = await browser.new_page()
        await page.goto(f"{bullpen_server.url}/queues/find/?id=order-42")
        matches = page.get_by_test_id("find-matches").locator("li")
        await expect(matches).to_have_count(2)
        await expect(matches.filter(has_text="mail / order-42")).to_contain_text("waiting")
        await expect(matches.filter(has_text="sms / order-42")).to_contain_text("completed")
        await browser.close()


async def test_a_long_id_keeps_the_header_one_line(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    long_id = "order-" + "x" * 300
    peer("add", "--queue", "mail", "--name", "send", "--opts", json.dumps({"jobId": long_id}))
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        await page.goto(f"{bullpen_server.url}/queues/q/mail/jobs/{long_id}/")
        await expect(page.get_by_test_id("job-state")).to_have_text("waiting")
        header = await page.locator("header.top, .top").first.bounding_box()
        assert header is not None and header["height"] < 60, header
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280, width
        await browser.close()


async def test_dead_letter_rows_stay_rows(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    reason = "SMTP 550: mailbox unavailable for user@example.com " * 8
    letter: dict[str, Any] = {
        "queue": "mail",
        "jobId": "77",
        "name": "send",
        "data": {"to": "user@example.com", "template": "weekly"},
        "failedReason": reason,
        "stacktrace": ["Traceback (most recent call last):\n" + "  File x.py line 1\n" * 40],
        "attemptsMade": 5,
    }
    for _ in range(3):
        peer("add", "--queue", "dead-letter", "--name", "mail.send", "--data", json.dumps(letter))
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        await page.goto(f"{bullpen_server.url}/queues/q/dead-letter/?state=waiting")
        rows = page.locator("#job-list tbody tr")
        await expect(rows).to_have_count(3)
        await expect(rows.first).to_contain_text("from mail / 77")
        box = await rows.first.bounding_box()
        assert box is not None and box["height"] < 110, box
        await browser.close()
