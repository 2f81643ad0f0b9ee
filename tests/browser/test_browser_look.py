"""In a real Chromium: the dark scheme follows the system, the header's choice overrides it and is
remembered across reloads (under the standalone site's strict CSP); on a 390 px phone no page
scrolls sideways and every control is a touch target of at least 44 px."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.support.browser import chromium
from tests.support.browser_checks import RECORD_VIOLATIONS, SIGNED_IN
from tests.support.browser_pages import OPERATOR, credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import CREDENTIALS, start_standalone

pytestmark = pytest.mark.browser

PHONE: Any = {"width": 390, "height": 844}
DESKTOP: Any = {"width": 1280, "height": 900}
# A failure message of many words: on a phone it must wrap across the width, not word by word.
LONG_ERRORS = [
    "Connection to smtp.relay.example.com:587 timed out after 30000 ms while sending the"
    " welcome message; the relay never answered STARTTLS",
    "Template 'welcome-v2' rendered an empty body for locale de-CH-x-private-use",
]

# Luminance of a computed "rgb(r, g, b)" colour, from 0 (black) to 1 (white).
LUMINANCE = """el => {
  const [r, g, b] = getComputedStyle(el).backgroundColor.match(/\\d+/g).map(Number)
    .map(c => c / 255).map(c => c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""

# Elements reaching past the right edge: what to fix when the page scrolls sideways.
OVERFLOWING = """() => {
  const width = window.innerWidth;
  return Array.from(document.querySelectorAll("body *"))
    .filter(el => el.getBoundingClientRect().right > width + 0.5)
    .slice(0, 6)
    .map(el => el.tagName.toLowerCase() + "." + String(el.className).trim().replace(/\\s+/g, "."));
}"""

# Controls smaller than 44 by 44 px (visible ones; JSON tree nodes are text, not actions).
SMALL_TARGETS = """() => Array.from(document.querySelectorAll(
    "main button, main select, main summary, main input[type=checkbox], .tab, .pager a,"
    + " .listbar a, .overview td[data-state], .job-id a, .top > a, .top button, .top select"))
  .filter(el => !el.closest(".json-tree"))
  .map(el => [el, el.getBoundingClientRect()])
  .filter(([, box]) => box.width > 0 && box.height > 0 && (box.width < 44 || box.height < 44))
  .map(([el, box]) => el.tagName.toLowerCase() + " '" + el.textContent.trim().slice(0, 20)
    + "' " + Math.round(box.width) + "x" + Math.round(box.height))"""

STROKE = "el => getComputedStyle(el).stroke"
FILL = "el => getComputedStyle(el).backgroundColor"


@pytest.fixture
def site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_standalone(redis_server.url, tmp_path, **CREDENTIALS, BULLPEN_OPEN_READS="1")
    yield server
    stop_bullpen(server)


def seed(peer: Peer) -> dict[str, Any]:
    """The scenario queue ``shop`` (a job in every state, a flow, a paused queue) and failed
    jobs with long messages in ``email``."""
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")["ids"]
    for index, message in enumerate(LONG_ERRORS * 2):
        data = json.dumps({"to": f"user{index}@example.com", "error": message})
        peer("add", "--queue", "email", "--name", "send-welcome", "--data", data)
    peer("work", "--queue", "email", "--count", str(len(LONG_ERRORS) * 2), "--fail")
    return ids


def pages(ids: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, path) of every page a phone must show without sideways scrolling."""
    shop = "/queues/q/shop/"
    found = [("overview", "/queues/"), ("groups", "/queues/q/email/?state=failed")]
    tabs = ("waiting", "active", "prioritized", "delayed", "waiting-children")
    tabs += ("completed", "failed")
    found += [(state, f"{shop}?state={state}") for state in tabs]
    found.append(("paused", f"/queues/q/{ids['paused-queue']}/?state=waiting"))
    found += [
        ("job-failed", f"{shop}jobs/{ids['failed'][1]}/"),
        ("job-completed", f"{shop}jobs/{ids['completed'][1]}/"),
        ("job-active", f"{shop}jobs/{ids['active'][0]}/"),
        ("job-flow", f"{shop}jobs/{ids['waiting-children'][0]}/"),
    ]
    return found


async def settle(page: Page) -> None:
    """Until the page's fragments (charts, failure groups, workers) have loaded (each loaded
    fragment replaces its placeholder; the stylesheets were loaded with the page)."""
    await expect(page.locator("[hx-trigger='load']")).to_have_count(0)


async def background(page: Page) -> float:
    return float(await page.locator("body").evaluate(LUMINANCE))


async def prefs_cookie(context: BrowserContext) -> str:
    """The preferences cookie's value in ``context`` ("" when there is none)."""
    found = [c["value"] for c in await context.cookies() if c["name"] == "bullpen_prefs"]
    return unquote(found[0]) if found else ""


async def test_dark_scheme_follows_the_system_and_the_choice_is_remembered(
    peer: Peer, site: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    ids = seed(peer)
    failed_job = f"{site.url}/queues/q/shop/jobs/{ids['failed'][1]}/"
    async with chromium(chromium_path) as browser:
        dark = await browser.new_context(
            color_scheme="dark", viewport=DESKTOP, extra_http_headers=credentials_header(SIGNED_IN)
        )
        page = await dark.new_page()
        await page.add_init_script(RECORD_VIOLATIONS)
        choice = page.locator("#theme-choice")
        for name, path in pages(ids):
            await page.goto(site.url + path)
            await settle(page)
            assert await background(page) < 0.05, name
            await expect(choice).to_have_value("system")

        # Charts and badges take the scheme's colours too.
        await page.goto(f"{site.url}/queues/q/shop/?state=failed")
        await settle(page)
        spark = page.locator(".throughput .spark .done")
        assert await spark.evaluate(STROKE) == "rgb(86, 211, 100)"

        # Choosing light overrides the system, survives a reload and a boosted navigation.
        await choice.select_option("light")
        await expect(page.locator("html")).to_have_attribute("data-theme", "light")
        assert await background(page) > 0.8
        assert await spark.evaluate(STROKE) == "rgb(30, 123, 52)"
        await page.reload()
        await expect(choice).to_have_value("light")
        assert await background(page) > 0.8
        await page.locator(f'tr[data-job-id="{ids["failed"][1]}"] .job-id a').click()
        badge = page.locator("#job-state")
        await expect(badge).to_have_text("failed")
        await expect(choice).to_have_value("light")
        assert await background(page) > 0.8
        assert await badge.evaluate(FILL) == "rgb(179, 38, 30)"
        # Kept in the preferences cookie: the server renders the next page in it.
        assert "theme=light" in await prefs_cookie(dark)
        reloaded = await page.reload()
        assert reloaded is not None and 'data-theme="light"' in await reloaded.text()

        # Back to the system's scheme: the stored choice is gone.
        await choice.select_option("system")
        assert await background(page) < 0.05
        assert await badge.evaluate(FILL) == "rgb(164, 40, 31)"
        assert "theme=" not in await prefs_cookie(dark)
        assert await page.evaluate("window.__violations") == []

        # A light system: light by default, dark when chosen, remembered.
        light = await browser.new_context(
            color_scheme="light", viewport=DESKTOP, extra_http_headers=credentials_header(SIGNED_IN)
        )
        page = await light.new_page()
        await page.goto(failed_job)
        await settle(page)
        assert await background(page) > 0.8
        await page.locator("#theme-choice").select_option("dark")
        assert await background(page) < 0.05
        await page.reload()
        await expect(page.locator("#theme-choice")).to_have_value("dark")
        assert await background(page) < 0.05
        await browser.close()


async def test_phone_pages_fit_the_width_and_controls_are_touch_targets(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    ids = seed(peer)
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            viewport=PHONE,
            is_mobile=True,
            has_touch=True,
            extra_http_headers=credentials_header(OPERATOR),
        )
        page = await context.new_page()
        tops: dict[str, list[float]] = {}
        for name, path in pages(ids):
            await page.goto(bullpen_server.url + path)
            await settle(page)
            fits = await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert fits, f"{name} scrolls sideways: {await page.evaluate(OVERFLOWING)}"
            assert await page.evaluate(SMALL_TARGETS) == [], name
            if name == "overview":
                # The overview's cards put failed, waiting and active first.
                for state in ("failed", "waiting", "active", "completed"):
                    cell = page.locator(f'tr[data-queue="shop"] td[data-state="{state}"]')
                    tops[state] = await cell.evaluate(
                        "el => [el.getBoundingClientRect().top, el.getBoundingClientRect().left]"
                    )
        assert tops["failed"][0] == tops["waiting"][0] == tops["active"][0] < tops["completed"][0]
        assert tops["failed"][1] < tops["waiting"][1] < tops["active"][1]
        await browser.close()
