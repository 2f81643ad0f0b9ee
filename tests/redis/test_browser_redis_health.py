"""In Chromium: the overview loads its Redis panel after itself; a server set to
``allkeys-lru`` shows its warning in red, and a phone folds the panel under a line saying a
server needs attention, the queues still on the first screen."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
LIMIT = 512 * 1024 * 1024
# Set to a folder to keep pictures of the panel (looked at by hand; the suite takes none).
SHOTS = os.environ.get("BULLPEN_HEALTH_SHOTS")


@pytest.fixture
def evicting(redis_server: RedisServer) -> Iterator[None]:
    """The test server with an eviction policy BullMQ must not run under and a memory limit
    (far above what it uses), for this test."""
    with redis_server.client() as admin:
        admin.config_set("maxmemory-policy", "allkeys-lru")
        admin.config_set("maxmemory", str(LIMIT))
        try:
            yield
        finally:
            admin.config_set("maxmemory", "0")
            admin.config_set("maxmemory-policy", "noeviction")


async def test_the_overview_shows_the_redis_panel_and_its_warning(
    peer: Peer, bullpen_server: LiveServer, browser: Browser, evicting: None, redis_client: Any
) -> None:
    peer("scenario", "--queue", "shop")
    page = await browser.new_page(viewport={"width": 1280, "height": 800})
    await page.goto(f"{bullpen_server.url}/queues/")
    server = page.get_by_test_id("redis-server")
    await expect(server).to_have_count(1)
    await expect(server).to_have_attribute("data-connection", "default")
    await expect(server).to_contain_text(redis_client.info("server")["redis_version"])
    memory = server.get_by_test_id("redis-memory")
    await expect(memory).to_contain_text("of 512.0 MB (")
    await expect(memory.locator("progress")).to_have_attribute("max", "100")
    warnings = server.get_by_test_id("redis-warnings")
    await expect(warnings).to_contain_text("maxmemory-policy is allkeys-lru")
    await expect(warnings).to_contain_text("Set maxmemory-policy to noeviction.")
    colour = await warnings.evaluate("e => getComputedStyle(e).color")
    bad = await page.evaluate(
        "() => { const p = document.createElement('p'); p.className = 'redis-bad';"
        " document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; }"
    )
    assert colour == bad and colour != "rgb(0, 0, 0)"
    # The queues are listed as before, the panel aside.
    await expect(page.locator('#overview-list tr[data-queue="shop"]')).to_have_count(1)
    if SHOTS:
        await page.screenshot(path=f"{SHOTS}/redis-panel-wide.png", full_page=True)

    phone = await browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    await phone.goto(f"{bullpen_server.url}/queues/")
    fold = phone.get_by_test_id("redis-fold")
    await expect(fold.locator("summary")).to_contain_text("1 server needs attention")
    await expect(phone.get_by_test_id("redis-warnings")).not_to_be_visible()
    row = await phone.locator("#overview-list tbody tr").first.bounding_box()
    assert row is not None and row["y"] + 80 < PHONE["height"], row
    await fold.locator("summary").click()
    await expect(phone.get_by_test_id("redis-warnings")).to_be_visible()
    width = await phone.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width  # nothing scrolls sideways
    if SHOTS:
        await phone.screenshot(path=f"{SHOTS}/redis-panel-phone.png", full_page=True)
