"""Seen in Chromium by a tenant of the standalone site: a job's parent in a queue hidden from
her keeps its place unnamed, and the *Go to* box does not lead to a job in a hidden queue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import CREDENTIALS, start_standalone

pytestmark = pytest.mark.browser

AMY = {"username": "amy", "password": "amy-pass-for-the-test"}
RULES = [
    {"QUEUES": ["t1-flow-mid", "t2-*"], "OPERATE": ["user:ops"]},
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["scope:t1", "user:ops"]},
    {"QUEUES": "*", "OPERATE": ["user:ops"]},
]


@pytest.fixture
def tenant_site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_standalone(
        redis_server.url,
        tmp_path,
        **CREDENTIALS,
        DASHBOARD_USERS=f"amy:{AMY['password']}",
        BASIC_AUTH_SCOPES="amy=t1",
        QUEUE_ACCESS=json.dumps(RULES),
    )
    yield server
    stop_bullpen(server)


async def test_a_tenant_sees_no_hidden_relative_and_cannot_go_to_one(
    peer: Peer, tenant_site: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    flow = peer("flow", "--queue", "t1-flow", "--children", "1", "--grandchildren", "1")
    mid, leaf = flow["mid"][0], flow["leaf"][0][0]
    peer("add", "--queue", "t2-mail", "--name", "n", "--opts", '{"jobId": "invoice-77"}')
    async with chromium(chromium_path) as browser:
        credentials: Any = AMY
        context = await browser.new_context(http_credentials=credentials)
        page = await context.new_page()
        await page.goto(f"{tenant_site.url}/queues/q/t1-flow-leaf/jobs/{leaf}/")
        flow_section = page.get_by_test_id("flow")
        await expect(flow_section).to_contain_text(
            "Parent: a job in a queue this user may not view"
        )
        # The tree has loaded (its hidden middle node) before the page is read whole.
        await expect(page.locator('[data-testid="flow-node"][data-hidden="true"]')).to_have_count(1)
        content = await page.content()
        assert "t1-flow-mid" not in content and mid not in content

        # The box: a hidden queue's job id leads where an unknown id does, a search.
        box = page.get_by_label("Go to queue")
        await box.fill("invoice-77")
        await box.press("Enter")
        await page.wait_for_url("**/queues/search/?q=invoice-77")
        assert "t2-mail" not in await page.content()
        await browser.close()
