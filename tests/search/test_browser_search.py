"""Search inside a queue, in Chromium: Enter streams rows of the list's own kind into the page,
with progress and a Cancel that stops the scan; the state tab stays; selected matches can be
acted on."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.async_api import Browser, Page, expect

from tests.support.browser import chromium
from tests.support.browser_pages import credentials_header, socket_messages
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

FAILED_TAB = "/queues/q/mail/%3Fstate%3Dfailed"  # as a sign-in's next
OPERATOR = {"username": "operator", "password": "s3cret-pass"}
HOSTILE_NAME = '"><img src=x onerror="window.pwned=1">'
HOSTILE_REASON = '<script>window.pwned=2</script>"><img src=x onerror="window.pwned=3"> timeout'
DONE = re.compile(r"^scanned (\d+) of \1, (\d+) match(es)?$")
# Every text the progress shows, in order, recorded by the page itself.
RECORD_PROGRESS = """
window.progressSeen = [];
new MutationObserver(() => {
  const el = document.querySelector('[data-testid="search-progress"]');
  if (el && el.textContent !== window.progressSeen.at(-1)) window.progressSeen.push(el.textContent);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


@pytest.fixture
def mail(peer: Peer) -> dict[str, str]:
    """Queue ``mail``: three failed jobs matching "timeout" (one hostile), two that do not."""
    failures = [
        ("send", {"to": "a@example.com", "error": "SMTP timeout after 30000 ms"}),
        ("send", {"to": "b@example.com", "error": "mailbox unavailable"}),
        (HOSTILE_NAME, {"html": "<b>x</b>", "error": HOSTILE_REASON}),
        ("send", {"to": "c@example.com", "error": "SMTP timeout after 10000 ms"}),
        ("send", {"to": "d@example.com", "error": "template not found"}),
    ]
    ids = [
        peer("add", "--queue", "mail", "--name", name, "--data", json.dumps(data))["id"]
        for name, data in failures
    ]
    peer("work", "--queue", "mail", "--fail", "--count", str(len(ids)), "--concurrency", "5")
    return {"timeout-1": ids[0], "other": ids[1], "hostile": ids[2], "timeout-2": ids[3]}


async def list_row_shape(page: Page) -> tuple[int, int]:
    row = page.locator('[data-testid="jobs"] tbody tr').first
    return await row.locator("> td").count(), await row.locator("input.job-select").count()


async def search(page: Page, query: str) -> None:
    box = page.locator('[data-testid="search"] input[name="q"]')
    await box.fill(query)
    await box.press("Enter")


async def shows_search_rows_like_list_rows(
    browser: Browser, server: LiveServer, mail: dict[str, str], *, operator: bool, shot: str
) -> None:
    context = await browser.new_context(
        extra_http_headers=credentials_header(OPERATOR) if operator else None,
        viewport={"width": 1400, "height": 900},
    )
    await context.add_init_script(RECORD_PROGRESS)
    page = await context.new_page()
    if operator:
        await page.goto(f"{server.url}/queues/sign-in?next={FAILED_TAB}")
        await expect(page.locator(".top .who")).to_have_text("operator")
    else:
        await page.goto(f"{server.url}/queues/q/mail/?state=failed")
    cells, boxes = await list_row_shape(page)
    assert (cells, boxes) == ((10, 1) if operator else (9, 0))

    await search(page, "timeout")
    progress = page.locator('[data-testid="search-progress"]')
    await expect(progress).to_have_text(DONE)
    assert (await progress.text_content()) == "scanned 5 of 5, 3 matches"
    seen = await page.evaluate("window.progressSeen")
    after = seen[seen.index("searching…") + 1 :]
    assert after[-1] == "scanned 5 of 5, 3 matches", seen
    assert all(text.startswith("scanned ") for text in after), seen
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == ["failed"] and query["q"] == ["timeout"]
    await expect(page.locator('.tab.current[data-state="failed"]')).to_be_visible()

    results = page.locator('[data-testid="search-results"]')
    await expect(results).to_be_visible()
    await expect(page.locator('[data-testid="job-list"]')).to_be_hidden()
    rows = results.locator("tbody tr")
    await expect(rows).to_have_count(3)
    ids = {await row.get_attribute("data-job-id") for row in await rows.all()}
    assert ids == {mail["timeout-1"], mail["timeout-2"], mail["hostile"]}
    for row in await rows.all():
        assert await row.locator("> td").count() == cells
        assert await row.locator("input.job-select").count() == boxes
    head = [await th.text_content() for th in await results.locator("thead th").all()]
    assert head[-3:] == ["Attempts", "Progress", "Data / reason"] and len(head) == cells

    # Job data is shown as text, never run as markup.
    hostile = results.locator(f'tr[data-job-id="{mail["hostile"]}"]')
    await expect(hostile.locator("td").nth(boxes + 1)).to_have_text(HOSTILE_NAME)
    await expect(hostile.locator(".reason")).to_have_text(HOSTILE_REASON)
    assert await results.locator("script, img").count() == 0
    assert await page.evaluate("window.pwned") is None

    await page.click('[data-testid="search-clear"]')
    await expect(results).to_be_hidden()
    await expect(page.locator('[data-testid="job-list"]')).to_be_visible()
    assert "q" not in parse_qs(urlsplit(page.url).query)
    assert parse_qs(urlsplit(page.url).query)["state"] == ["failed"]
    await context.close()


async def test_enter_streams_list_rows_into_the_failed_tab(
    peer: Peer, mail: dict[str, str], bullpen_server: LiveServer, chromium_path: str
) -> None:
    async with chromium(chromium_path) as browser:
        await shows_search_rows_like_list_rows(
            browser, bullpen_server, mail, operator=True, shot="operator"
        )
        await shows_search_rows_like_list_rows(
            browser, bullpen_server, mail, operator=False, shot="anonymous"
        )
        await browser.close()


async def test_retry_a_selected_search_result(
    peer: Peer,
    mail: dict[str, str],
    bullpen_server: LiveServer,
    chromium_path: str,
    redis_client: Any,
) -> None:
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 1400, "height": 900},
        )
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        listed = socket_messages(page, "list")
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next={FAILED_TAB}")
        # The list the socket sends when it subscribes may replace the rows: the box is
        # checked once it came, not under it. As long as a test server gives a socket to be
        # accepted (60 s): a loaded machine's took more than 20.
        await asyncio.wait_for(listed.wait(), 60)
        # A list row checked before the search must not ride along with the search's selection.
        await page.locator(f'[data-testid="jobs"] tr[data-job-id="{mail["other"]}"] input').check()
        await search(page, "timeout after 30000")
        results = page.locator('[data-testid="search-results"] tbody tr')
        await expect(results).to_have_count(1)
        await results.first.locator("input.job-select").check()
        checked = await page.locator(".job-select:checked").count()
        assert checked == 1

        await page.locator('[data-testid="bulk"] button', has_text="Retry").click()
        # The page reloads after the action and runs the search again from its URL.
        progress = page.locator('[data-testid="search-progress"]')
        await expect(progress).to_have_text("scanned 4 of 4, 0 matches")
        await expect(page.locator('.tab.current[data-state="failed"] .count')).to_have_text("4")
        await expect(page.locator('[data-testid="search-results"] .search-none')).to_be_visible()
        await browser.close()
    assert redis_client.zscore("bull:mail:failed", mail["timeout-1"]) is None
    assert mail["timeout-1"] in redis_client.lrange("bull:mail:wait", 0, -1)
    for other in ("other", "hostile", "timeout-2"):
        assert redis_client.zscore("bull:mail:failed", mail[other]) is not None


def scans(redis_client: Any) -> int:
    """LRANGE calls Redis has answered: the waiting tab's search makes one per 200 jobs."""
    stats = redis_client.info("commandstats")
    return int(stats.get("cmdstat_lrange", {}).get("calls", 0))


async def test_cancel_stops_a_long_search(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    total = 50_000  # a scan of some seconds: time to press Cancel on a fast machine too
    peer("add-bulk", "--queue", "big", "--name", "sync", "--count", str(total), "--data", "{}")
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        await page.goto(f"{bullpen_server.url}/queues/q/big/?state=waiting")
        # The newest jobs come first: the match is in the first chunk, long before the end.
        await search(page, f"data.i = {total - 100}")
        progress = page.locator('[data-testid="search-progress"]')
        running = re.compile(rf"^scanned [1-9]\d* of {total}, 1 match…$")
        await expect(progress).to_have_text(running)
        rows = page.locator('[data-testid="search-results"] tbody tr')
        await expect(rows).to_have_count(1)
        await expect(progress).to_have_text(running)  # the row came while the scan went on
        await page.click('[data-testid="search-cancel"]')
        await expect(progress).to_have_text(re.compile(r" — cancelled$"))
        await expect(page.locator('[data-testid="search-cancel"]')).to_be_hidden()
        said = await progress.text_content()
        scanned = int(re.findall(r"\d+", said or "")[0])
        assert 0 < scanned < total, said
        await asyncio.sleep(0.5)  # a chunk already asked for may still be answered
        calls = scans(redis_client)
        await asyncio.sleep(2)
        # The server stopped scanning: a scan going on reads a chunk every few milliseconds;
        # at most a stray read of the page's own list (the live tab) may come meanwhile.
        assert scans(redis_client) - calls <= 2
        assert await progress.text_content() == said  # and the page stopped counting
        assert parse_qs(urlsplit(page.url).query)["state"] == ["waiting"]
        await browser.close()
