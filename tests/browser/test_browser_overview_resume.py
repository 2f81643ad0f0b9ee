"""An overview of 200 queues served from the live reader's counts, in Chromium: its socket is
sent only what changed since the page was rendered (the parts of none of its rows, when none
changed), and the totals row still follows jobs added to queues the page does not list."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.async_api import Page, WebSocket, expect

from tests.support.browser import chromium
from tests.support.browser_pages import OPERATOR, credentials_header
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_the_overview_resumes_from_its_version_and_keeps_its_totals(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    # Tenant i's two queues hold i % 4 waiting jobs; every 25th tenant's mail queue one failed.
    peer("many-queues", "--count", "100", "--services", "mail,billing", timeout=180)
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            extra_http_headers=credentials_header(OPERATOR),
            viewport={"width": 1400, "height": 900},
        )
        page = await context.new_page()
        # What each page's socket received, the newest page's last.
        received: list[list[dict[str, Any]]] = []

        def on_socket(socket: WebSocket) -> None:
            frames: list[dict[str, Any]] = []
            received.append(frames)
            socket.on("framereceived", lambda payload: frames.append(json.loads(payload)))

        page.on("websocket", on_socket)
        await page.goto(f"{bullpen_server.url}/queues/sign-in?next=/queues/%3Fper_page%3D25")
        # A page rendered before the reader follows every queue (or while it is not current,
        # on a loaded machine) says no version and its socket gets every count: such a page is
        # loaded again until one was rendered from the reader's counts. So is one whose socket
        # got counts without the reader's totals (read from Redis: the reader was behind when
        # it subscribed), or every count because the reader's counts started over meanwhile
        # (the next page's version is of another era).
        rows = page.locator("tr[data-queue]")
        spec: dict[str, Any] = {}
        counts: list[dict[str, Any]] = []
        for _ in range(40):
            await expect(rows).to_have_count(25)
            era = str(spec.get("since", "")).partition(":")[0]
            spec = json.loads(await page.locator("#main").get_attribute("data-live") or "{}")
            since = str(spec.get("since", ""))
            if counts and since.startswith(f"{era}:"):
                break  # the page before's socket was sent every queue within its era
            counts = []
            if since:
                await expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
                counts = await counts_sent(page, received[-1])
                if 'id="overview-total-waiting"' not in counts[0]["cells"]:
                    counts = []  # read from Redis: the reader was behind as it subscribed
                elif rows_in(counts[0]) < 25:
                    break
            await page.wait_for_timeout(250)
            await page.reload()
        assert spec.get("since"), "no page was rendered from the reader's counts"
        assert counts, "no socket was sent the reader's counts"
        assert rows_in(counts[0]) < 25, "the socket was sent every row"
        assert "queues" not in counts[0], "the socket was sent queues' counts"
        waiting_total = page.locator('th[data-total="waiting"]')
        shown = int(await waiting_total.inner_text())

        # t099-mail is on no row of the first page: only the totals say it moved.
        peer("add", "--queue", "t099-mail", "--name", "late", "--data", "{}")
        await expect(waiting_total).to_have_text(str(shown + 1), timeout=15_000)
        await expect(rows.first).to_have_attribute("data-queue", "t001-billing")


def rows_in(message: dict[str, Any]) -> int:
    """How many rows' parts an overview message holds (each row's pause badge is one)."""
    return len(re.findall(r'id="q[0-9a-f]+-pause"', message["html"]))


async def counts_sent(page: Page, frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The overview messages (its live parts) a page's socket received, once there is one."""
    for _ in range(100):
        counts = [frame for frame in frames if frame.get("type") == "overview"]
        if counts:
            return counts
        await page.wait_for_timeout(100)
    raise AssertionError("the socket sent no counts")
