"""In a real Chromium, axe-core finds no serious or critical accessibility violation on any kind
of page (overview plain, and grouped with a group open, queue tabs, failure groups, a job, find
and search, the audit log, sign-in, a 404) in the light and dark schemes and on a 390 px phone;
count links have names that stand alone, a skip link leads to the content, and the live
connection's state is announced politely."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, Route, expect

from tests.support.browser import chromium
from tests.support.browser_checks import RULES, axe_on_every_page, axe_violations
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

OPERATOR: Any = {"username": "operator", "password": "s3cret-pass"}
PHONE: Any = {"width": 390, "height": 844}
DESKTOP: Any = {"width": 1280, "height": 900}
TAGS = ("light", "dark", "phone")
FAILURES = [
    "Connection to smtp.relay.example.com:587 timed out after 30000 ms",
    "Template 'welcome-v2' rendered an empty body for locale de-CH",
]


def seed(peer: Peer) -> dict[str, Any]:
    """``shop`` with a job in every state (and ``shop-paused``, ``shop-children``: a group of
    three by name), and ``email`` whose failures fall into two groups."""
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")["ids"]
    for index, message in enumerate(FAILURES * 2):
        data = json.dumps({"to": f"user{index}@example.com", "error": message})
        peer("add", "--queue", "email", "--name", "send-welcome", "--data", data)
    peer("work", "--queue", "email", "--count", str(len(FAILURES) * 2), "--fail")
    return ids


def pages(ids: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, path) of one page of every kind an operator reads."""
    shop = "/queues/q/shop/"
    return [
        ("overview", "/queues/"),
        ("waiting", f"{shop}?state=waiting"),
        ("delayed", f"{shop}?state=delayed"),
        ("failure-groups", "/queues/q/email/?state=failed"),
        ("job", f"{shop}jobs/{ids['failed'][1]}/"),
        ("find", "/queues/find/?id=order-42"),
        ("audit", "/queues/audit/"),
        ("not-found", f"{shop}jobs/no-such-job/"),
    ]


async def settle(page: Page) -> None:
    """Until the page's fragments (charts, failure groups, workers) have loaded."""
    await expect(page.locator("[hx-trigger='load']")).to_have_count(0)


async def show_the_prompts_page(route: Route) -> None:
    """The sign-in page as a visitor sees it who cancels the browser's credentials prompt (a
    headless browser has no prompt to cancel: without the challenge it shows the page)."""
    response = await route.fetch()
    headers = {k: v for k, v in response.headers.items() if k.lower() != "www-authenticate"}
    await route.fulfill(response=response, headers=headers)


async def new_context(browser: Browser, tag: str, **extra: Any) -> BrowserContext:
    phone = tag == "phone"
    return await browser.new_context(
        color_scheme="dark" if tag == "dark" else "light",
        viewport=PHONE if phone else DESKTOP,
        is_mobile=phone,
        has_touch=phone,
        bypass_csp=True,
        **extra,
    )


async def sweep(
    browser: Browser, server: LiveServer, ids: dict[str, Any], tag: str
) -> dict[str, list[str]]:
    """Every page's serious and critical violations in one scheme and size, by page name."""
    rules = RULES[tag]
    context = await new_context(browser, tag, extra_http_headers=credentials_header(OPERATOR))
    await axe_on_every_page(context)
    page = await context.new_page()
    # Through the sign-in page, which sends a signed-in operator on to the overview.
    await page.goto(server.url + "/queues/sign-in?next=/queues/")
    await expect(page.locator(".top .who")).to_be_visible()
    found: dict[str, list[str]] = {}

    async def check(name: str) -> None:
        found[f"{tag} {name}"] = await axe_violations(page, rules)

    for name, path in pages(ids):
        await page.goto(server.url + path)
        await settle(page)
        await check(name)

    # The overview grouped by name, a group opened to show its queues' rows.
    await page.goto(server.url + "/queues/?group=head")
    await page.locator('tbody[data-group="shop"] .group-toggle').click()
    await expect(page.locator('tr[data-queue="shop-paused"]')).to_be_visible()
    await check("overview-group-open")

    # A search in the waiting tab, its results streamed into the page.
    await page.goto(server.url + "/queues/q/shop/?state=waiting")
    await settle(page)
    if not await page.locator("form.search input[name=q]").is_visible():
        await page.get_by_test_id("search-fold").locator("summary").click()  # folded on a phone
    await page.locator("form.search input[name=q]").fill("order")
    await page.locator("form.search input[name=q]").press("Enter")
    await expect(page.locator("#search-results tbody tr")).to_have_count(2)
    await check("search")

    # The keyboard shortcuts and preferences dialog ("?" once out of the search field).
    await page.locator("h1").click()
    await page.keyboard.press("?")
    await expect(page.get_by_role("dialog", name="Preferences and shortcuts")).to_be_visible()
    await check("shortcuts")
    await context.close()

    # Signing in: the credentials prompt's page, as a visitor without them sees it.
    anonymous = await new_context(browser, tag)
    await axe_on_every_page(anonymous)
    page = await anonymous.new_page()
    await page.route(lambda url: "/sign-in?" in url, show_the_prompts_page)
    await page.goto(server.url + "/queues/sign-in?next=/queues/")
    await expect(page.locator("h1")).to_have_text("401")
    await check("sign-in")
    await anonymous.close()
    return found


# One test walks all three schemes and sizes: a test each cost the seed, a server, a browser
# and the audited action three times over.
async def test_no_serious_or_critical_violations_on_any_page(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    ids = seed(peer)
    found: dict[str, list[str]] = {}
    async with chromium(chromium_path) as browser:
        # An action, so that the audit log has a row to show.
        context = await new_context(
            browser, "light", extra_http_headers=credentials_header(OPERATOR)
        )
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await page.goto(bullpen_server.url + "/queues/sign-in?next=/queues/q/shop-children/")
        await page.get_by_role("button", name="Pause").click()
        await expect(page.locator("h1 .badge.paused")).to_be_visible()
        await context.close()

        for tag in TAGS:
            found |= await sweep(browser, bullpen_server, ids, tag)
        await browser.close()
    assert len(found) == len(TAGS) * (len(pages(ids)) + 4)
    problems = {name: lines for name, lines in found.items() if lines}
    assert problems == {}, json.dumps(problems, indent=1)


async def test_names_a_skip_link_and_a_polite_live_status(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    seed(peer)
    async with chromium(chromium_path) as browser:
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        await page.goto(bullpen_server.url + "/queues/")

        # Each count link says what it counts, and keeps saying it when a live update changes it.
        failed = page.get_by_role("link", name="4 failed jobs in email", exact=True)
        await expect(failed).to_have_text("4")
        await expect(
            page.get_by_role("link", name="1 active job in shop", exact=True)
        ).to_be_visible()
        status = page.locator("#live-status")
        await expect(status).to_have_text("live")
        await asyncio.to_thread(peer, "add", "--queue", "email", "--name", "again", "--data", "{}")
        waiting = page.get_by_role("link", name="1 waiting job in email", exact=True)
        await expect(waiting).to_have_text("1")

        # The connection's state is announced politely; the counts are in no live region.
        assert await status.get_attribute("role") == "status"
        assert await status.get_attribute("aria-live") == "polite"
        live_cells = page.locator("[aria-live] td[data-state], [role=status] td[data-state]")
        await expect(live_cells).to_have_count(0)

        # The first Tab reaches the skip link, shown while focused; it leads into <main>.
        await page.keyboard.press("Tab")
        skip = page.get_by_role("link", name="Skip to content")
        await expect(skip).to_be_focused()
        box = await skip.bounding_box()
        assert box is not None and box["y"] >= 0
        await page.keyboard.press("Enter")
        await expect(page.locator("main")).to_be_focused()
        await page.keyboard.press("Tab")
        focused = await page.evaluate("document.activeElement.closest('main') !== null")
        assert focused, "the next Tab stays inside the content"
        # Focus is visible: the focused field has an outline.
        outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none"
        await browser.close()
