"""In Chromium: a real Node worker fails a job, so the queue's default rule on new failure
signatures fires. The queue page's "Alerts" section shows it; Silence for an hour, Unsilence and
Acknowledge from there, each said by the page it reloads to, shown by the section and by the
overview's badge, kept in Redis and audited. A visitor who may not act sees no buttons."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from queues.alerts.silences import holds_key
from tests.support.browser_pages import answer_dialogs, operator_page
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

RULE = "new_failure_signatures"


def _fail_one(peer: Peer) -> None:
    peer("add", "--queue", "mail", "--name", "send", "--data", "{}")
    peer("work", "--queue", "mail", "--count", "1", "--fail")


def _item(page: Page) -> Any:
    return page.locator(f'[data-testid="queue-alert"][data-rule="{RULE}"]')


async def test_silence_unsilence_and_acknowledge_from_the_queue_page(
    peer: Peer, bullpen_server: LiveServer, browser: Browser, redis_client: Any
) -> None:
    await asyncio.to_thread(_fail_one, peer)
    page = await operator_page(browser, bullpen_server, "/queues/q/mail/")
    answer_dialogs(page)
    item = _item(page)
    await expect(item).to_have_attribute("data-status", "firing")
    await expect(item.get_by_test_id("alert-what")).to_have_text(
        "1 new failure signature in the last hour, more than 0"
    )
    await expect(item.get_by_test_id("alert-hold")).to_have_count(0)

    await item.get_by_test_id("silence-alert").locator("summary").click()
    await item.locator('select[name="minutes"]').select_option(label="1 h")
    await item.get_by_role("button", name="Silence", exact=True).click()
    await expect(page.locator("#toast")).to_have_text(
        "Alert “new failure signatures” on mail silenced for 60 min"
    )
    item = _item(page)
    await expect(item).to_have_attribute("data-status", "silenced")
    await expect(item.get_by_test_id("alert-hold")).to_contain_text("silenced until 20")
    await expect(item.get_by_test_id("alert-hold")).to_contain_text(" UTC in 59 min, by operator")
    stored = json.loads(redis_client.hget(holds_key(), f"mail\x00{RULE}"))
    assert 3500 < stored["silencedUntil"] - time.time() <= 3600

    await page.goto(f"{bullpen_server.url}/queues/?problems=1")
    row = page.locator('tr[data-queue="mail"]')
    badge = row.locator(f'.badge.alert[data-rule="{RULE}"]')
    await expect(badge).to_have_class("badge alert silenced")
    await expect(badge).to_have_text("new failure signatures 1 · silenced")
    title = await badge.get_attribute("title") or ""
    assert title.startswith("1 new failure signature in the last hour, more than 0; silenced until")
    assert title.endswith(", by operator")
    await expect(row).not_to_have_class("alerting")

    await page.goto(f"{bullpen_server.url}/queues/q/mail/")
    await _item(page).get_by_test_id("unsilence-alert").click()
    await expect(page.locator("#toast")).to_have_text(
        "Alert “new failure signatures” on mail unsilenced"
    )
    await expect(_item(page)).to_have_attribute("data-status", "firing")
    assert redis_client.hget(holds_key(), f"mail\x00{RULE}") is None

    await _item(page).get_by_test_id("acknowledge-alert").click()
    await expect(page.locator("#toast")).to_have_text(
        "Alert “new failure signatures” on mail acknowledged"
    )
    item = _item(page)
    await expect(item).to_have_attribute("data-status", "acknowledged")
    await expect(item.get_by_test_id("alert-hold")).to_contain_text("acknowledged by operator at")
    await expect(item.get_by_test_id("acknowledge-alert")).to_have_count(0)
    await expect(item.get_by_test_id("silence-alert")).to_have_count(1)

    await page.goto(f"{bullpen_server.url}/queues/")
    badge = page.locator(f'tr[data-queue="mail"] .badge.alert[data-rule="{RULE}"]')
    await expect(badge).to_have_text("new failure signatures 1 · acknowledged")
    assert "; acknowledged by operator at " in (await badge.get_attribute("title") or "")

    # On a phone the section folds under a line that counts its alerts; opened, it fits the
    # width, its menu open.
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(f"{bullpen_server.url}/queues/q/mail/")
    fold = page.get_by_test_id("alerts-fold").locator("> summary")
    await expect(fold).to_have_text("Alerts acknowledged 1")
    await expect(_item(page)).not_to_be_visible()
    await fold.click()
    silence = _item(page).get_by_test_id("silence-alert")
    await silence.locator("summary").click()
    await expect(silence.get_by_role("button", name="Silence", exact=True)).to_be_visible()
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    box = await silence.get_by_role("button", name="Silence", exact=True).bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390

    with sqlite3.connect(bullpen_server.log.with_suffix(".sqlite3")) as db:
        rows = db.execute(
            "select username, action, queue, result from bullpen_auditentry order by id"
        ).fetchall()
    assert rows == [
        ("operator", "silence-alert", "mail", "ok"),
        ("operator", "unsilence-alert", "mail", "ok"),
        ("operator", "acknowledge-alert", "mail", "ok"),
    ]


async def test_a_visitor_who_may_not_act_sees_the_alert_without_buttons(
    peer: Peer, bullpen_server: LiveServer, browser: Browser
) -> None:
    await asyncio.to_thread(_fail_one, peer)
    page = await browser.new_page()
    await page.goto(f"{bullpen_server.url}/queues/q/mail/")
    item = _item(page)
    await expect(item).to_have_attribute("data-status", "firing")
    await expect(page.get_by_test_id("sign-in-to-act")).to_be_visible()
    await expect(item.locator("button, form, details")).to_have_count(0)
