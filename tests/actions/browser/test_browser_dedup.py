"""In Chromium: release a deduplication key from the queue page's section, pause the queue
with a reason typed in the prompt, and detach a child from its parent on the child's page;
each confirmed on the page, and done in Redis."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.parse
import urllib.request
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.browser_pages import answer_dialogs, chromium, operator_page
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


def post_as_operator(server: LiveServer, path: str, form: dict[str, str] | None = None) -> None:
    request = urllib.request.Request(  # noqa: S310 (a local test server)
        f"{server.url}/queues/api/{path}",
        data=urllib.parse.urlencode(form or {}).encode(),
        headers={"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 (a local test server)
        assert answer.status == 200


async def test_release_a_key_pause_with_a_reason_and_detach_a_child(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    odd = "acct <b>7</b>"
    opts = '{"deduplication": {"id": "acct <b>7</b>", "ttl": 600000}}'
    held = peer("add", "--queue", "sync", "--name", "s", "--opts", opts)["id"]
    flow = peer("flow", "--queue", "tree", "--children", "1", "--grandchildren", "0")
    child = flow["mid"][0]
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/sync/")
        answer_dialogs(page, prompt_text="migrating <db>")
        section = page.get_by_test_id("deduplication")
        row = section.locator("tbody tr")
        await expect(row).to_have_count(1)
        await expect(row.locator("td").first).to_have_text(odd)
        await expect(row.get_by_role("link", name=held)).to_be_visible()
        await row.get_by_test_id("release-dedup").click()
        await expect(page.locator("#toast")).to_have_text(f"Deduplication id {odd} released")
        assert not redis_client.exists(f"bull:sync:de:{odd}")

        await page.goto(f"{bullpen_server.url}/queues/q/sync/")
        await page.get_by_role("button", name="Pause").click()
        await expect(page.get_by_test_id("pause-reason")).to_have_text("migrating <db>")
        assert redis_client.get("bullpen:pause-reason:bull:sync") == "migrating <db>"
        # Resumed elsewhere: the live update hides the reason with the badge.
        await expect(page.locator("#live-status")).to_have_text("live")
        await asyncio.to_thread(post_as_operator, bullpen_server, "queues/sync/resume/")
        await expect(page.get_by_test_id("pause-reason")).to_be_hidden()
        await expect(page.locator("h1 .badge.paused")).to_be_hidden()
        # Paused elsewhere with a reason: the open queue page and overview say why, as text.
        overview = await page.context.new_page()
        await overview.goto(f"{bullpen_server.url}/queues/")
        await expect(overview.locator("#live-status")).to_have_text("live")
        why = "disk <i>full</i> & more"
        pause = "queues/sync/pause/"
        await asyncio.to_thread(post_as_operator, bullpen_server, pause, {"reason": why})
        await expect(page.get_by_test_id("pause-reason")).to_have_text(why)
        await expect(page.locator("h1 .badge.paused")).to_be_visible()
        row = overview.locator('tr[data-queue="sync"]')
        await expect(row.get_by_test_id("pause-reason")).to_have_text(why)
        await expect(row.locator("i")).to_have_count(0)
        await asyncio.to_thread(post_as_operator, bullpen_server, "queues/sync/resume/")
        await expect(row.get_by_test_id("pause-reason")).to_be_hidden()
        await overview.close()

        await page.goto(f"{bullpen_server.url}/queues/q/tree-mid/jobs/{child}/")
        await page.get_by_test_id("detach-child").click()
        await expect(page.locator("#toast")).to_have_text(f"Job {child} detached from its parent")
        await expect(page.get_by_test_id("detach-child")).to_have_count(0)
    assert not redis_client.hexists(f"bull:tree-mid:{child}", "parentKey")
    assert (peer("job-status", "--queue", "tree", "--id", flow["root"]))["state"] == "waiting"


async def test_release_all_orphans_then_a_job_s_own_key_from_its_page(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    """A key whose job completed holds new jobs back for nothing: *Release all orphans* drops
    it and leaves the key of a job still waiting; that job's page releases its own."""
    ttl = {"deduplication": {"id": "done-id", "ttl": 3_600_000}}
    done = peer("add", "--queue", "orph", "--name", "s", "--opts", json.dumps(ttl))["id"]
    peer("work", "--queue", "orph", "--count", "1", "--timeout-ms", "10000")
    ttl["deduplication"]["id"] = "live-id"
    waiting = peer("add", "--queue", "orph", "--name", "s", "--opts", json.dumps(ttl))["id"]
    assert peer("job-status", "--queue", "orph", "--id", done)["state"] == "completed"
    assert redis_client.exists("bull:orph:de:done-id") and redis_client.exists(
        "bull:orph:de:live-id"
    )
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/orph/")
        answer_dialogs(page)
        section = page.get_by_test_id("deduplication")
        await expect(section.get_by_test_id("dedup-orphan")).to_have_count(1)
        await section.get_by_test_id("release-dedup-orphans").click()
        await expect(page.locator("#toast")).to_have_text("1 orphan deduplication key released")
        assert not redis_client.exists("bull:orph:de:done-id")
        assert redis_client.exists("bull:orph:de:live-id")

        await page.goto(f"{bullpen_server.url}/queues/q/orph/jobs/{waiting}/")
        await expect(page.get_by_test_id("job-dedup")).to_contain_text("live-id")
        await page.get_by_test_id("job-dedup").get_by_test_id("release-dedup").click()
        await expect(page.locator("#toast")).to_have_text("Deduplication id live-id released")
        await expect(page.get_by_test_id("job-dedup")).to_contain_text("is free")
    assert not redis_client.exists("bull:orph:de:live-id")
    # Node adds a job with either id again: nothing holds them back.
    again = peer("add", "--queue", "orph", "--name", "s", "--opts", json.dumps(ttl))["id"]
    assert again not in (done, waiting)
