"""In Chromium: reschedule a delayed job from its page, then cap its queue's concurrency from
the queue page; each confirmed on the page it lands on, and done in Redis."""

from __future__ import annotations

import asyncio
import base64
import time
import urllib.parse
import urllib.request
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser_pages import answer_dialogs, chromium, operator_page
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

HOUR = 3_600_000


def reschedule_by_api(server: LiveServer, job_id: str, delay_ms: int) -> None:
    request = urllib.request.Request(  # noqa: S310 (a local test server)
        f"{server.url}/queues/api/queues/later/jobs/{job_id}/reschedule/",
        data=urllib.parse.urlencode({"delay_ms": delay_ms}).encode(),
        headers={"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 (a local test server)
        assert answer.status == 200


async def test_reschedule_a_job_then_cap_its_queue(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    job_id = peer("add", "--queue", "later", "--name", "remind", "--opts", f'{{"delay": {HOUR}}}')[
        "id"
    ]
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, f"/queues/q/later/jobs/{job_id}/")
        answer_dialogs(page)
        form = page.get_by_test_id("reschedule")
        await form.get_by_label("Run in").fill("3 h")
        # Someone else reschedules the job meanwhile: the live update changes the job's facts
        # around the form being filled in, and what was typed stays (a fresh copy would put
        # "1 h" back, and the job would run two hours early).
        await expect(page.locator("#live-status")).to_have_text("live")
        await page.evaluate("document.getElementById('job-facts').dataset.before = 'yes'")
        await asyncio.to_thread(reschedule_by_api, bullpen_server, job_id, 2 * HOUR)
        await page.wait_for_function("!document.getElementById('job-facts').dataset.before")
        await expect(form.get_by_label("Run in")).to_have_value("3 h")
        asked = time.time() * 1000
        await form.get_by_role("button", name="Reschedule").click()
        await expect(page.locator("#toast")).to_have_text(f"Job {job_id} rescheduled")
        await expect(page.get_by_test_id("job-state")).to_have_text("delayed")
        due = float(redis_client.zscore("bull:later:delayed", job_id)) / 0x1000
        assert asked + 3 * HOUR <= due <= time.time() * 1000 + 3 * HOUR

        await page.goto(f"{bullpen_server.url}/queues/q/later/")
        await page.get_by_test_id("limits").locator("summary").click()
        limit = page.get_by_test_id("concurrency")
        await limit.locator('input[name="concurrency"]').fill("2")
        await limit.get_by_role("button", name="Set concurrency").click()
        await expect(page.locator("#toast")).to_have_text(
            "Queue later: global concurrency set to 2"
        )
        await expect(page.get_by_test_id("concurrency-badge")).to_have_text("≤ 2 at once")
        await page.get_by_test_id("limits").locator("summary").click()
        await expect(page.locator('input[name="concurrency"]')).to_have_value("2")
    assert redis_client.hget("bull:later:meta", "concurrency") == "2"
