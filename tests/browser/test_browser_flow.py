"""In a real Chromium, a flow's tree on a job page: a child completes and its node's state
changes on screen, with no reload and no second read of the tree."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_a_child_completes_and_its_node_changes_live(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    ids = peer("flow", "--queue", "trip", "--children", "2", "--grandchildren", "1")
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": 1300, "height": 900})
        tree_reads: list[str] = []
        page.on("request", lambda r: tree_reads.append(r.url) if "/flow/" in r.url else None)
        await page.goto(f"{bullpen_server.url}/queues/q/trip/jobs/{ids['root']}/")
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("window.bullpenNoReload = true")
        tree = page.locator('[data-testid="flow-tree"]')
        nodes = tree.locator('[data-testid="flow-node"]')
        await expect(nodes).to_have_count(5)
        leaves = tree.locator('[data-testid="flow-node"][data-queue="trip-leaf"]')
        await expect(leaves.locator('[data-testid="flow-node-state"]')).to_have_text(
            ["waiting", "waiting"]
        )
        mids = tree.locator('[data-testid="flow-node"][data-queue="trip-mid"]')
        await expect(mids.locator('[data-testid="flow-node-state"]')).to_have_text(
            ["waiting-children", "waiting-children"]
        )
        await asyncio.sleep(1.5)  # the watches reach the follower
        await asyncio.to_thread(peer, "work", "--queue", "trip-leaf", "--count", "2")

        done = leaves.locator('[data-testid="flow-node-state"]')
        await expect(done).to_have_text(["completed", "completed"], timeout=15000)
        await expect(mids.locator('[data-testid="flow-node-state"]')).to_have_text(
            ["waiting", "waiting"], timeout=15000
        )
        await expect(leaves.first.locator(".badge")).to_have_class("badge state-completed")
        assert await page.evaluate("window.bullpenNoReload === true")
        assert len(tree_reads) == 1  # the tree was read once, at load; states came live
        await browser.close()
