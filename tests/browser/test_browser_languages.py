"""The dashboard in the browser's language: a German Chromium gets German pages (overview, a
queue, a job, the search over every queue) with German numbers, an English one English, and
the header's switcher changes the language for the pages that follow. German words are long:
nothing may overflow a phone."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

CREDENTIALS = {"username": "operator", "password": "s3cret-pass"}
PHONE = {"width": 390, "height": 844}


async def overflowing(page: Page) -> list[str]:
    """Elements that stick out of a page narrower than its content (a phone's width)."""
    found: list[str] = await page.evaluate(
        """() => {
          const width = document.documentElement.clientWidth;
          const out = [];
          for (const el of document.querySelectorAll("body *")) {
            if (el.closest(".scroll-x, pre, .switcher-matches, dialog, table")) continue;
            const box = el.getBoundingClientRect();
            if (box.width && box.right > width + 1) out.push(el.tagName + "." + el.className);
          }
          return out;
        }"""
    )
    return found


async def test_german_and_english_browsers_and_the_switcher(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")["ids"]
    failed_id = ids["failed"][0]
    # Enough jobs for a thousands separator.
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "12345", timeout=120)
    base = bullpen_server.url
    async with chromium(chromium_path) as browser:
        german = await browser.new_context(
            locale="de-DE", extra_http_headers=credentials_header(CREDENTIALS)
        )
        page = await german.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.dismiss()))
        await page.goto(f"{base}/queues/sign-in?next=/queues/")
        await expect(page.locator("html")).to_have_attribute("lang", "de")
        await expect(page.locator("h1")).to_contain_text("Warteschlangen")
        await expect(page.locator('thead a[data-sort="failed"]')).to_have_text("fehlgeschlagen")
        mail_waiting = page.locator('tr[data-queue="mail"] td[data-state="waiting"] a')
        await expect(mail_waiting).to_have_text("12.345")
        await expect(mail_waiting).to_have_attribute("aria-label", "12345 Jobs (wartend) in mail")
        await expect(page.locator("#live-status")).to_have_text("live")

        await page.goto(f"{base}/queues/q/mail/?state=waiting")
        await expect(page.locator('.tab[data-state="waiting"]')).to_contain_text("wartend")
        await expect(page.locator('.tab[data-state="waiting"] .count')).to_have_text("12.345")
        await expect(page.locator(".listbar .total")).to_have_text("12.345")
        await expect(page.locator('[data-testid="queue-actions"] button').first).to_have_text(
            "Pausieren"
        )

        await page.goto(f"{base}/queues/q/shop/jobs/{failed_id}/")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("fehlgeschlagen")
        await expect(page.locator('[data-testid="retry"]')).to_have_text("Erneut versuchen")
        await expect(page.locator('[data-testid="failure"] h2')).to_have_text("Fehler")
        # A relative time the page keeps fresh, in German words.
        await expect(page.locator("#job-facts time .rel").first).to_contain_text("vor ")

        # The search over every queue: its page, the streamed groups and the script's progress
        # words, and the question before acting on the matches.
        await page.goto(f"{base}/queues/search/?q=declined&queues=shop")
        await expect(page.locator("h1")).to_have_text("Alle Warteschlangen durchsuchen")
        await expect(page.locator('[data-testid="search-progress"]')).to_have_text(
            re.compile(r"^Warteschlangen 1 von 1, \d+ Jobs gelesen, 2 Treffer$")
        )
        group = page.locator('[data-testid="search-group"]')
        await expect(group).to_have_attribute("aria-label", "Treffer in shop")
        await expect(group.locator("th").last).to_have_text("Fundstelle")
        await expect(group.locator("tbody .badge").first).to_have_text("fehlgeschlagen")
        await expect(group.locator('[data-testid="search-group-foot"] .muted')).to_have_text(
            re.compile(r"^2 Treffer \(2 fehlgeschlagen\) unter \d+ gelesenen Jobs$")
        )
        await group.locator('[data-testid="match-retry"]').click()
        await expect(group.locator('[data-testid="match-question"]')).to_have_text(
            "2 passende Jobs (fehlgeschlagen) erneut versuchen?"
        )
        await expect(group.locator('[data-testid="match-go"]')).to_have_text(
            "2 Jobs erneut versuchen"
        )
        # Done as a bulk action, followed over the websocket: its end is said in German too.
        await group.locator('[data-testid="match-go"]').click()
        await expect(page.get_by_test_id("toast")).to_have_text("2 Jobs erneut versucht")

        # A phone: the long German words wrap; nothing sticks out of the screen.
        await page.set_viewport_size(PHONE)
        for path, name in (
            ("/queues/", "overview"),
            ("/queues/q/mail/?state=waiting", "queue"),
            (f"/queues/q/shop/jobs/{failed_id}/", "job"),
            ("/queues/search/?q=declined&queues=shop", "search"),
        ):
            await page.goto(base + path)
            await expect(page.locator("html")).to_have_attribute("lang", "de")
            assert await overflowing(page) == [], name

        english = await browser.new_context(
            locale="en-US", extra_http_headers=credentials_header(CREDENTIALS)
        )
        page = await english.new_page()
        await page.goto(f"{base}/queues/sign-in?next=/queues/")
        await expect(page.locator("html")).to_have_attribute("lang", "en")
        await expect(page.locator("h1")).to_contain_text("Queues")
        await expect(page.locator('tr[data-queue="mail"] td[data-state="waiting"] a')).to_have_text(
            "12,345"
        )

        # The switcher: French for this browser from now on, on every page, until changed.
        switch = page.locator('[data-testid="language-switch"]')
        await expect(switch.get_by_label("Language")).to_have_value("en")
        await switch.get_by_label("Language").select_option("fr")
        await switch.get_by_role("button").click()
        await expect(page.locator("html")).to_have_attribute("lang", "fr")
        await expect(page.locator("h1")).to_contain_text("Files")
        await page.goto(f"{base}/queues/q/shop/?state=failed")
        await expect(page.locator("html")).to_have_attribute("lang", "fr")
        await expect(page.locator('.tab[data-state="failed"]')).to_contain_text("en échec")
        await expect(page.locator('[data-testid="language-choice"]')).to_have_value("fr")
        # And back, with the keyboard alone.
        await page.locator('[data-testid="language-choice"]').focus()
        await page.keyboard.press("Home")
        await page.keyboard.press("Tab")
        await page.keyboard.press("Enter")
        await expect(page.locator("html")).to_have_attribute("lang", "en")
        await expect(page.locator('.tab[data-state="failed"]')).to_contain_text("failed")
        await browser.close()
