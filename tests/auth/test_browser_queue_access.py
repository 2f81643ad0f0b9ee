"""Per-queue access in the standalone site, set from its environment, seen in Chromium: a
tenant signs in and sees only its queues, live, and another tenant's queue does not exist."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser import chromium
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, http_get, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import CREDENTIALS, start_standalone

pytestmark = pytest.mark.browser

TENANTS = {"amy": "amy-pass-for-the-test", "bob": "bob-pass-for-the-test"}
RULES = [
    {"QUEUES": "t1-mail", "VIEW": ["scope:t1"], "OPERATE": ["scope:t1", "user:ops"]},
    {"QUEUES": "t1-*", "VIEW": ["scope:t1"], "OPERATE": ["user:ops"]},
    {"QUEUES": "t2-*", "VIEW": ["scope:t2"], "OPERATE": ["scope:t2", "user:ops"]},
    {"QUEUES": "*", "OPERATE": ["user:ops"]},
]


def basic(user: str) -> dict[str, str]:
    password = TENANTS[user] if user in TENANTS else CREDENTIALS["DASHBOARD_PASSWORD"]
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def tenant_site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_standalone(
        redis_server.url,
        tmp_path,
        **CREDENTIALS,
        DASHBOARD_USERS=" ".join(f"{name}:{password}" for name, password in TENANTS.items()),
        BASIC_AUTH_SCOPES="amy=t1 bob=t2,t2-extra",
        QUEUE_ACCESS=json.dumps(RULES),
    )
    yield server
    stop_bullpen(server)


def listed(server: LiveServer, user: str) -> list[str]:
    status, body = http_get(server.url + "/queues/api/queues/", headers=basic(user))
    assert status == 200, body
    return sorted(queue["slug"] for queue in json.loads(body)["queues"])


async def test_a_tenant_signs_in_and_sees_only_its_queues(
    peer: Peer, tenant_site: LiveServer, chromium_path: str
) -> None:
    for queue in ("t1-mail", "t1-sms", "t2-mail"):
        peer("add", "--queue", queue, "--name", "hello")
    # The environment's users and scopes: each sees its own, the site's operator all of them.
    assert listed(tenant_site, "amy") == ["t1-mail", "t1-sms"]
    assert listed(tenant_site, "bob") == ["t2-mail"]
    assert listed(tenant_site, "ops") == ["t1-mail", "t1-sms", "t2-mail"]

    async with chromium(chromium_path) as browser:
        amy: Any = {"username": "amy", "password": TENANTS["amy"]}
        context = await browser.new_context(http_credentials=amy)
        page = await context.new_page()
        await page.goto(tenant_site.url + "/queues/")
        await expect(page.locator("#live-status")).to_have_text("live")
        rows = page.locator("tr[data-queue]")
        await expect(rows).to_have_count(2)
        assert sorted(await rows.evaluate_all("rows => rows.map(r => r.dataset.queue)")) == [
            "t1-mail",
            "t1-sms",
        ]
        waiting_total = page.locator('th[data-total="waiting"]')
        await expect(waiting_total).to_have_text("2")
        # Live: a job for amy's queue moves her figures; one for bob's changes nothing she sees.
        await asyncio.to_thread(peer, "add", "--queue", "t2-mail", "--name", "hidden")
        await asyncio.to_thread(peer, "add", "--queue", "t1-mail", "--name", "seen")
        await expect(
            page.locator('tr[data-queue="t1-mail"] td[data-state="waiting"]')
        ).to_have_text("2")
        await expect(waiting_total).to_have_text("3")
        await expect(rows).to_have_count(2)
        assert "t2-mail" not in await page.content()

        # A queue she may only view has no buttons; another tenant's queue does not exist.
        await page.goto(tenant_site.url + "/queues/q/t1-sms/")
        await expect(page.get_by_role("heading", name="t1-sms")).to_be_visible()
        await expect(page.get_by_test_id("queue-actions")).to_have_count(0)
        await page.goto(tenant_site.url + "/queues/q/t1-mail/")
        await expect(page.get_by_test_id("queue-actions")).to_be_visible()
        response = await page.goto(tenant_site.url + "/queues/q/t2-mail/")
        assert response is not None and response.status == 404
        await expect(page.get_by_text("Unknown queue 't2-mail'")).to_be_visible()
        await browser.close()
