"""In Chromium: a page's live socket (htmx's websocket extension's, on <body>): one per tab
across navigations, in the page's language; it comes back by itself when its server stops
(SIGTERM, as a deployment restarts it) or dies (SIGKILL) and starts again, or closes it for any
reason but a sign-out, with no reload: the page greys its figures meanwhile, says it is
reconnecting, and is live again with what it missed."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from playwright.async_api import Browser, WebSocket, WebSocketRoute, expect

from tests.support.browser_pages import RECORD_SOCKETS
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.browser


async def test_one_socket_per_tab_across_navigations_in_the_pages_language(
    browser: Browser, bullpen_server: LiveServer, peer: Peer
) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    context = await browser.new_context(locale="de-DE")
    page = await context.new_page()
    await page.add_init_script(RECORD_SOCKETS)
    sockets: list[WebSocket] = []
    page.on("websocket", lambda socket: sockets.append(socket))
    await page.goto(f"{bullpen_server.url}/queues/")
    pill = page.locator("#live-status")
    await expect(pill).to_have_attribute("data-state", "live")
    await page.evaluate("window.bullpenNoReload = true")
    # A queue's page and back, as htmx loads them (no reload): the one socket watches each.
    await page.locator('tr[data-queue="mail"] a').first.click()
    await expect(page.locator("#job-list tbody tr")).to_have_count(1)
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
    await expect(page.locator("#job-list tbody tr")).to_have_count(2, timeout=10000)
    await page.go_back()
    waiting = page.locator('tr[data-queue="mail"] td[data-state="waiting"]')
    await expect(waiting).to_have_text("2")
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "c", "--data", "{}")
    await expect(waiting).to_have_text("3", timeout=10000)
    assert await page.evaluate("window.bullpenNoReload === true")
    assert await page.evaluate("window.socketsOpened") == 1
    assert len(sockets) == 1
    # Its address names the page's language: live parts are rendered in it.
    assert await page.evaluate("document.documentElement.lang") == "de"
    assert "lang=de" in sockets[0].url.split("?", 1)[1], sockets[0].url
    await context.close()


async def test_a_page_reconnects_after_its_server_stops_or_dies_and_starts_again(
    browser: Browser, redis_server: RedisServer, peer: Peer, tmp_path: Path
) -> None:
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log")
    port = int(server.url.rsplit(":", 1)[1])
    page = await browser.new_page()
    await page.add_init_script(RECORD_SOCKETS)
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    try:
        await page.goto(f"{server.url}/queues/")
        pill = page.locator("#live-status")
        waiting = page.locator('tr[data-queue="mail"] td[data-state="waiting"]')
        await expect(pill).to_have_text("live", timeout=15000)
        await expect(waiting).to_have_text("1")
        await page.evaluate("window.bullpenNoReload = true")
        for graceful, jobs in ((True, "2"), (False, "3")):
            stop_bullpen(server, graceful=graceful)
            await expect(pill).to_have_text("reconnecting…", timeout=15000)
            await expect(page.locator("body")).to_have_class("stale")
            # What happens while the server is away reaches the page once it is back.
            await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", jobs, "--data", "{}")
            server = start_bullpen(redis_server.url, tmp_path / "daphne.log", port=port)
            await expect(pill).to_have_text("live", timeout=30000)
            await expect(page.locator("body")).not_to_have_class("stale")
            await expect(waiting).to_have_text(jobs, timeout=15000)
        codes = await page.evaluate("window.closeCodes")
        print(f"close codes the page saw: {codes}")
        assert await page.evaluate("window.bullpenNoReload === true")
        # One socket at a time: the first, and one after each restart (attempts refused while
        # the server was away never opened).
        assert await page.evaluate("window.socketsOpened") == 3, codes
    finally:
        await page.close()
        stop_bullpen(server, graceful=False)


async def test_closes_other_than_accidents_reconnect_too_but_a_sign_out(
    browser: Browser, bullpen_server: LiveServer
) -> None:
    # htmx's extension reconnects after 1006, 1011, 1012 and 1013 only: a proxy going away
    # (1001) or a re-check that could not run (4500) must bring the page back as well.
    routes: list[WebSocketRoute] = []

    def through(route: WebSocketRoute) -> None:
        routes.append(route)
        route.connect_to_server()

    page = await browser.new_page()
    await page.add_init_script(RECORD_SOCKETS)
    await page.route_web_socket(re.compile(r"/ws/bullpen/"), through)
    await page.goto(f"{bullpen_server.url}/queues/")
    pill = page.locator("#live-status")
    await expect(pill).to_have_text("live", timeout=15000)
    assert len(routes) == 1
    for code in (1001, 1000, 4500):
        await routes[-1].close(code=code, reason="gone")
        await expect(page.locator("body")).to_have_class("stale")
        await expect(pill).to_have_text("live", timeout=15000)
        await expect(page.locator("body")).not_to_have_class("stale")
    assert len(routes) == 4
    assert await page.evaluate("window.socketsOpened") == 4
    # Closed as signed out, the page says so (the server's words) and stays closed.
    await routes[-1].close(code=4403, reason="sign in again")
    await expect(pill).to_have_text("sign in again")
    await expect(pill).to_have_attribute("data-state", "signed-out")
    await page.wait_for_timeout(3000)
    assert len(routes) == 4
    await page.close()
