"""In Chromium: clean by a typed duration, workers one row per process, the styled 404, the
favicon, and relative times that tick."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote

import pytest
from playwright.async_api import Browser, Page, expect

from tests.support.browser_pages import OPERATOR, credentials_header
from tests.support.peer import PEER, Peer
from tests.support.servers.live_server import LiveServer
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import WorkerProcess, wait_for

pytestmark = pytest.mark.browser

MINUTE_MS = 60_000


async def operator_page(browser: Browser, server: LiveServer, path: str) -> Page:
    context = await browser.new_context(
        extra_http_headers=credentials_header(OPERATOR),
        viewport={"width": 1300, "height": 900},
    )
    page = await context.new_page()
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.goto(f"{server.url}/queues/sign-in?next={quote(path)}")
    await expect(page.locator(".top .who")).to_have_text("operator")
    return page


def add_aged(peer: Peer, queue: str, name: str, age_ms: int) -> str:
    opts = json.dumps({"timestamp": int(time.time() * 1000) - age_ms})
    return str(peer("add", "--queue", queue, "--name", name, "--data", "{}", "--opts", opts)["id"])


async def test_clean_older_than_a_typed_duration(
    peer: Peer, bullpen_server: LiveServer, browser: Browser
) -> None:
    ages = {"old-1": 180, "old-2": 45, "young": 20, "new": 0}
    ids = {
        name: add_aged(peer, "tidy", name, minutes * MINUTE_MS) for name, minutes in ages.items()
    }
    page = await operator_page(browser, bullpen_server, "/queues/q/tidy/?state=waiting")
    grace = page.get_by_test_id("clean-grace")
    await expect(grace).to_have_value("1 h")

    # Nonsense is refused with the units that would have worked, and nothing is removed.
    await grace.fill("half an hour")
    await page.get_by_test_id("clean").locator("button").click()
    await expect(page.locator("#toast")).to_contain_text("units: ms, s, min, h, d, w")
    await expect(page.get_by_test_id("clean-question")).to_have_count(0)
    assert len(peer("inspect", "--queue", "tidy")["jobs"]["waiting"]) == 4

    await grace.fill("30 min")
    await page.get_by_test_id("clean").locator("button").click()
    await expect(page.get_by_test_id("clean-question")).to_have_text(
        "Remove up to 1,000 waiting jobs older than 30 min? This cannot be undone."
    )
    await page.get_by_test_id("clean-go").click()
    await expect(page.locator(".listbar .total")).to_have_text("2")  # the page reloaded
    waiting = peer("inspect", "--queue", "tidy")["jobs"]["waiting"]
    assert set(waiting) == {ids["young"], ids["new"]}


async def test_workers_one_row_per_process(
    peer: Peer,
    bullpen_server: LiveServer,
    browser: Browser,
    redis_server: RedisServer,
    redis_client: Any,
    worker_processes: Callable[..., WorkerProcess],
) -> None:
    queue = "proc-slow"  # a handler of tests.worker_fixtures: the Python runner serves it
    peer("add", "--queue", queue, "--name", "later", "--data", "{}", "--opts", '{"delay": 3600000}')
    runner = worker_processes(queue)
    await runner.wait_started()
    # A Node worker that stays connected until the test ends it.
    node = await asyncio.create_subprocess_exec(
        *("node", str(PEER), "work", "--redis", redis_server.url, "--queue", queue),
        *("--count", "1", "--timeout-ms", "60000"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    python_base = f"bull:{queue}:w:"
    node_name = "bull:" + base64.b64encode(queue.encode()).decode()

    def names() -> list[str]:
        return [str(c.get("name", "")) for c in redis_client.client_list()]

    async def both_connected() -> bool:
        found = names()
        return sum(n.startswith(python_base) for n in found) >= 2 and node_name in found

    try:
        await wait_for("a Python and a Node worker", both_connected)
        found = names()
        python_connections = sum(n.startswith(python_base) for n in found)
        runner_name = next(n for n in found if n.startswith(python_base))[len(python_base) :]
        page = await browser.new_page(viewport={"width": 1300, "height": 900})
        await page.goto(f"{bullpen_server.url}/queues/q/{queue}/")
        rows = page.get_by_test_id("worker")
        await expect(rows).to_have_count(2)
        cells = [await rows.nth(i).locator("td").all_inner_texts() for i in range(2)]
        by_library = {row[1]: row for row in cells}
        assert by_library["python"][0] == runner_name  # <host>-<pid> of the runner process
        assert int(by_library["python"][3]) == python_connections >= 2
        assert by_library["node"][0] == "—" and by_library["node"][3] == "1"
        assert all(row[2] == "127.0.0.1" for row in cells)
        await expect(page.get_by_test_id("workers-summary")).to_have_text(
            f"2 workers connected, {python_connections + 1} connections"
        )
    finally:
        node.kill()
        await node.wait()


@pytest.mark.shared_server
async def test_unknown_urls_get_the_dashboards_404(
    bullpen_server: LiveServer, browser: Browser
) -> None:
    page = await browser.new_page(viewport={"width": 1000, "height": 500})
    response = await page.goto(f"{bullpen_server.url}/queues/no/such/<page>/")
    assert response is not None and response.status == 404
    await expect(page.locator("h1")).to_have_text("404")
    await expect(page.locator(".error-box")).to_contain_text("is not a page of this dashboard")
    # Styled: the dashboard's stylesheet dresses the header.
    header = await page.locator("header.top").evaluate("el => getComputedStyle(el).backgroundColor")
    assert header == "rgb(29, 35, 48)"
    await page.get_by_text("Back to all queues").click()
    await expect(page.locator("h1")).to_contain_text("Queues")

    api = await page.goto(f"{bullpen_server.url}/queues/api/queues/mail/nonsense/")
    assert api is not None and api.status == 404
    assert await api.json() == {"error": "No API route at /queues/api/queues/mail/nonsense/"}


@pytest.mark.shared_server
async def test_favicon(bullpen_server: LiveServer, browser: Browser) -> None:
    page = await browser.new_page(viewport={"width": 200, "height": 200})
    icon = await page.goto(f"{bullpen_server.url}/favicon.ico")
    assert icon is not None and icon.status == 200
    assert icon.headers["content-type"] == "image/svg+xml"
    icon_bytes = await icon.body()
    assert b"<svg" in icon_bytes
    # Pages name it too, so a site that mounts Bullpen elsewhere shows it as well.
    await page.goto(f"{bullpen_server.url}/queues/")
    # Inlined, so the page is quiet at its load (no request for it afterwards).
    href = await page.locator('link[rel="icon"]').get_attribute("href")
    assert href is not None and href.startswith("data:image/svg+xml,")
    inlined = unquote(href.removeprefix("data:image/svg+xml,")).encode()
    assert b" ".join(inlined.split()) == b" ".join(icon_bytes.split())


@pytest.mark.shared_server
async def test_recent_relative_times_tick_every_second(
    peer: Peer, bullpen_server: LiveServer, browser: Browser
) -> None:
    fresh = add_aged(peer, "clock", "fresh", 0)
    old = add_aged(peer, "clock", "old", 120 * MINUTE_MS)
    page = await browser.new_page(viewport={"width": 1300, "height": 700})
    await page.goto(f"{bullpen_server.url}/queues/q/clock/?state=waiting")
    added = page.locator(f'tr[data-job-id="{fresh}"] time .rel').first
    await expect(added).to_have_text(re.compile(r"^\d+ s ago$"))
    seen = []
    for _ in range(14):
        seen.append(await added.text_content())
        await asyncio.sleep(0.25)
    # 3.5 s at one update a second: at least three different texts, counting up.
    distinct = list(dict.fromkeys(seen))
    assert len(distinct) >= 3, seen
    assert [int(str(text).split()[0]) for text in distinct] == sorted(
        int(str(text).split()[0]) for text in distinct
    )
    await expect(page.locator(f'tr[data-job-id="{old}"] time .rel').first).to_have_text("2 h ago")
