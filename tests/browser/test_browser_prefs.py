"""In a real Chromium, this browser remembers what its person chose (in a cookie the server
reads and checks): a job list's page size and order, the tab a queue opens at, how deep JSON
opens, and the overview's order, groups and queues per page. They survive a reload and hold in
a new page of the same browser: a page arrives as chosen, in one load, on an address without
parameters; "Forget my preferences" drops them."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl, unquote

import pytest
from playwright.async_api import Page, expect

from tests.support.browser import chromium
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

COOKIE = "bullpen_prefs"
NESTED = {"order": {"customer": {"address": {"city": "Basel", "lines": ["Rheinweg 1"]}}}}


def seed(peer: Peer) -> str:
    """``shop``: twelve waiting jobs, the first with data five levels deep; ``mail-eu`` with a
    waiting job and ``mail-us`` with a failed one (a group of two by name)."""
    first = peer("add", "--queue", "shop", "--name", "nested", "--data", json.dumps(NESTED))
    peer("add-bulk", "--queue", "shop", "--name", "order", "--count", "11")
    peer("add", "--queue", "mail-eu", "--name", "send", "--data", "{}")
    peer("add", "--queue", "mail-us", "--name", "send", "--data", "{}")
    peer("work", "--queue", "mail-us", "--count", "1", "--fail")
    return str(first["id"])


async def stored(page: Page) -> dict[str, str]:
    """What the preferences cookie holds, by name."""
    for cookie in await page.context.cookies():
        if cookie["name"] == COOKIE:
            return dict(parse_qsl(unquote(cookie["value"])))
    return {}


async def open_levels(page: Page) -> list[bool]:
    """Whether each JSON node of the job's data is open, outermost first."""
    opened: list[bool] = await page.locator('[data-testid="data"] details.j-node').evaluate_all(
        "nodes => nodes.map(node => node.open)"
    )
    return opened


async def test_preferences_survive_a_reload_and_a_new_page(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    nested_id = seed(peer)
    base = bullpen_server.url
    async with chromium(chromium_path) as browser:
        context = await browser.new_context()
        page = await context.new_page()

        # A job list's page size and order, chosen on the list.
        await page.goto(f"{base}/queues/q/shop/")
        await expect(page.locator(".tab.current")).to_have_attribute("data-state", "waiting")
        await page.locator("#job-list .listbar").get_by_role("link", name="10", exact=True).click()
        await expect(page.locator("#job-list tbody tr")).to_have_count(10)
        await page.locator("#job-list").get_by_role("link", name="oldest first").click()
        await expect(page.locator("#job-list tbody tr").first).to_have_attribute(
            "data-job-id", nested_id
        )
        assert await stored(page) == {"jobs_per_page": "10", "jobs_order": "asc"}

        # The overview's order, groups and queues per page, chosen in its tools.
        await page.goto(f"{base}/queues/")
        await page.get_by_test_id("sort").select_option("-waiting")
        await expect(page.locator("#overview-list tbody tr").first).to_have_attribute(
            "data-queue", "shop"
        )
        await page.get_by_test_id("grouping").select_option("head")
        await expect(page.locator("tbody.group")).to_have_count(2)
        await page.locator("select[name=per_page]").select_option("25")
        await expect(page.locator("#overview-list")).to_have_attribute(
            "data-params", "group=head&sort=-waiting&per_page=25"
        )

        # The tab a queue opens at and how deep JSON opens, chosen in the dialog.
        await page.get_by_role("button", name="Preferences").click()
        dialog = page.get_by_role("dialog", name="Preferences and shortcuts")
        await dialog.get_by_label("Open a queue at").select_option("failed")
        await dialog.get_by_label("Open JSON to").select_option("all")
        await dialog.get_by_role("button", name="Close").click()
        assert await stored(page) == {
            "jobs_per_page": "10",
            "jobs_order": "asc",
            "overview_sort": "-waiting",
            "overview_group": "head",
            "overview_per_page": "25",
            "tab": "failed",
            "json_depth": "all",
        }

        # A reload: the same, and the dialog shows what is kept.
        await page.reload()
        await expect(page.get_by_test_id("sort")).to_have_value("-waiting")
        await page.keyboard.press("?")
        await expect(dialog.get_by_label("Open a queue at")).to_have_value("failed")
        await expect(dialog.get_by_label("Open JSON to")).to_have_value("all")
        await page.keyboard.press("Escape")

        # A new page at the overview's bare address: the list as chosen, in one load.
        page = await context.new_page()
        dialog = page.get_by_role("dialog", name="Preferences and shortcuts")
        documents: list[str] = []
        page.on(
            "request", lambda r: documents.append(r.url) if r.resource_type == "document" else None
        )
        await page.goto(f"{base}/queues/", wait_until="networkidle")
        await expect(page.get_by_test_id("sort")).to_have_value("-waiting")
        await expect(page.get_by_test_id("grouping")).to_have_value("head")
        await expect(page.locator("select[name=per_page]")).to_have_value("25")
        await expect(page.locator("tbody.group")).to_have_count(2)
        assert documents == [f"{base}/queues/"]
        assert page.url == f"{base}/queues/"

        # The query string wins over what is remembered.
        await page.goto(f"{base}/queues/?sort=name")
        await expect(page.get_by_test_id("sort")).to_have_value("name")
        await expect(page.get_by_test_id("grouping")).to_have_value("head")

        # Plain links open pages as chosen: a queue at its preferred tab, size and order.
        assert await page.locator(".top a.brand").get_attribute("href") == "/queues/"
        await page.locator('tbody[data-group="mail"] .group-toggle').click()
        await page.get_by_role("link", name="mail-us", exact=True).click()
        await expect(page.locator(".tab.current")).to_have_attribute("data-state", "failed")
        await expect(page.locator('#job-list a.current[data-remember="per_page"]')).to_have_text(
            "10"
        )

        # A queue's bare address: its preferred tab, size and order.
        await page.goto(f"{base}/queues/q/shop/")
        await expect(page.locator(".tab.current")).to_have_attribute("data-state", "failed")
        await expect(page.locator('#job-list a.current[data-remember="per_page"]')).to_have_text(
            "10"
        )
        await expect(page.locator('#job-list a.current[data-remember="order"]')).to_have_text(
            "oldest first"
        )

        # JSON opens to every level.
        await page.goto(f"{base}/queues/q/shop/jobs/{nested_id}/")
        await expect(page.locator('[data-testid="data"] details.j-node')).to_have_count(5)
        assert await open_levels(page) == [True] * 5
        await page.keyboard.press("?")
        await dialog.get_by_label("Open JSON to").select_option("1")
        assert await open_levels(page) == [True, False, False, False, False]

        # Forgotten: nothing kept, two levels of JSON, the overview in its own order again.
        await dialog.get_by_role("button", name="Forget my preferences").click()
        assert await stored(page) == {}
        await expect(dialog.get_by_label("Open a queue at")).to_have_value("")
        assert await open_levels(page) == [True, True, False, False, False]
        await dialog.get_by_role("button", name="Close").click()
        assert await page.locator(".top a.brand").get_attribute("href") == "/queues/"
        await page.locator(".top a.brand").click()
        await expect(page.get_by_test_id("sort")).to_have_value("name")
        await browser.close()
