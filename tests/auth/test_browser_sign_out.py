"""In Chromium: signing out in one tab stops the live updates of the session's other tabs at
once, and they say the user must sign in again."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.browser_pages import _create_superuser
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_signing_out_closes_the_other_tabs_live_updates(
    bullpen_server: LiveServer, chromium_path: str
) -> None:
    _create_superuser(bullpen_server, "ada", "correct horse battery")
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(viewport={"width": 1200, "height": 500})
        watching = await context.new_page()
        await watching.goto(f"{bullpen_server.url}/admin/login/?next=/queues/")
        await watching.fill("#id_username", "ada")
        await watching.fill("#id_password", "correct horse battery")
        await watching.click('input[type="submit"]')
        await watching.wait_for_url("**/queues/")
        status = watching.locator("#live-status")
        await expect(status).to_have_text("live")
        other = await context.new_page()
        await other.goto(f"{bullpen_server.url}/queues/")
        await other.click('[data-testid="sign-out"]')
        await other.wait_for_url(f"{bullpen_server.url}/queues/")
        # Told by the sign-out itself: the server's re-check comes only every 30 s.
        await expect(status).to_have_text("signed out: sign in again for live updates")
        await expect(status).to_have_attribute("data-state", "signed-out")
        # It stays so: the page does not reconnect as someone else.
        await watching.wait_for_timeout(1500)
        await expect(status).to_have_attribute("data-state", "signed-out")
        await browser.close()
