"""The query language, export and saved searches in Chromium: a compound query typed in the
header's box finds exactly its jobs in two queues, a query that cannot be read is explained under
the page's box, *Download CSV* saves what the search found (read back with the csv module), and
a search saved under a name is listed, suggested by the header's box and runs again from there."""

from __future__ import annotations

import asyncio
import csv
import io
import re
from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header
from tests.support.peer import Peer
from tests.support.search_reads import add_jobs
from tests.support.servers.live_server import LiveServer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser

OPERATOR = {"username": "operator", "password": "s3cret-pass"}
QUERY = "name:charge AND data.plan = gold AND NOT data.customer:zeta"


async def test_query_error_download_and_saved_search(
    peer: Peer,
    redis_server: RedisServer,
    bullpen_server: LiveServer,
    chromium_path: str,
    tmp_path: Path,
) -> None:
    url = redis_server.url
    gold = await add_jobs(
        url,
        "lang-billing",
        [{"name": "charge", "data": {"customer": "acme-42", "plan": "gold"}}] * 2
        + [{"name": "charge", "data": {"customer": "zeta-1", "plan": "gold"}}]
        + [{"name": "charge", "data": {"customer": "acme-42", "plan": "free"}}],
    )
    await asyncio.to_thread(peer, "work", "--queue", "lang-billing", "--count", "4", "--fail")
    refunds = await add_jobs(
        url, "lang-refunds", [{"name": "charge", "data": {"customer": "o'hara", "plan": "gold"}}]
    )
    expected = {("lang-billing", gold[0]), ("lang-billing", gold[1]), ("lang-refunds", refunds[0])}
    errors: list[str] = []
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 1280, "height": 900},
            accept_downloads=True,
        )
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/")
        await expect(page.locator("h1")).to_contain_text("Queues")

        # A compound query from the header's box: every queue searched, exactly its jobs.
        box = page.get_by_label("Go to queue")
        await box.fill(QUERY)
        await box.press("Enter")
        await expect(page.locator("h1")).to_have_text("Search every queue")
        progress = page.get_by_test_id("search-progress")
        await expect(progress).to_have_text("queues 2 of 2, 5 jobs read, 3 matches")
        rows = page.get_by_test_id("search-group").locator("tbody tr")
        await expect(rows).to_have_count(3)

        # Download CSV: the same matches, every one, read back with Python's csv module.
        async with page.expect_download() as waiting:
            await page.get_by_test_id("download-csv").click()
        download = await waiting.value
        assert download.suggested_filename == "bullpen-search.csv"
        saved_to = tmp_path / "matches.csv"
        await download.save_as(saved_to)
        text = await asyncio.to_thread(saved_to.read_text, encoding="utf-8")
        table = list(csv.DictReader(io.StringIO(text, newline="")))
        assert {(row["queue"], row["id"]) for row in table} == expected
        assert {row["state"] for row in table} == {"failed", "waiting"}

        # A query that cannot be read: where, and what was expected, under the box.
        field = page.locator("#search-all-q")
        await field.fill("(name:charge OR")
        await field.press("Enter")
        await expect(progress).to_have_text("expected a term, NOT or '(' at character 16")
        await expect(progress).to_have_class(re.compile(r"\bsearch-error\b"))
        await expect(rows).to_have_count(0)
        await expect(page.get_by_test_id("search-downloads")).to_be_hidden()
        # The same page loaded with it says so as well, and searches nothing.
        await page.goto(f"{bullpen_server.url}/queues/search/?q=timestamp+%3E+yesterday")
        await expect(progress).to_contain_text(
            "expected now, now-<N>s|m|h|d or an ISO date at character 13"
        )
        await expect(progress).to_have_class(re.compile(r"\bsearch-error\b"))
        await expect(page.get_by_test_id("search-downloads")).to_be_hidden()
        # Said right under the box, before the states to search.
        box_bottom = await field.bounding_box() or {"y": 0, "height": 0}
        said_top = (await progress.bounding_box() or {"y": 0})["y"]
        states_top = (await page.locator(".search-states").bounding_box() or {"y": 0})["y"]
        assert box_bottom["y"] + box_bottom["height"] <= said_top < states_top

        # Save the search under a name: listed on the page, suggested by the header's box.
        await field.fill(QUERY)
        await field.press("Enter")
        await expect(progress).to_have_text("queues 2 of 2, 5 jobs read, 3 matches")
        await page.goto(page.url)  # the page as loaded for this search offers to save it
        await page.get_by_label("Save this search as").fill("Gold charges <b>")
        await page.get_by_role("button", name="Save").click()
        await expect(page.get_by_test_id("toast")).to_have_text("Search “Gold charges <b>” saved")
        saved = page.get_by_test_id("saved-search")
        await expect(saved).to_have_count(1)
        await expect(saved.get_by_role("link")).to_have_text("Gold charges <b>")

        await page.goto(f"{bullpen_server.url}/queues/")
        await box.fill("gold ch")
        suggestion = page.get_by_test_id("switcher-saved")
        await expect(suggestion).to_contain_text("Gold charges <b>")
        await suggestion.click()
        await expect(progress).to_have_text("queues 2 of 2, 5 jobs read, 3 matches")
        await expect(page.locator("#search-all-q")).to_have_value(QUERY)

        # Deleted from the list, it is gone.
        await page.get_by_test_id("saved-search-delete").click()
        await expect(page.get_by_test_id("saved-none")).to_be_visible()
        await context.close()
    assert errors == []
