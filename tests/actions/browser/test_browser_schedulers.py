"""In Chromium: create a job scheduler from the queue page's form, edit it, run it now; each
confirmed by a dialog, said on the page it lands on, and done in Redis."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.async_api import expect

from queues.actions.scheduler_actions import upsert_scheduler
from queues.reads.keys import QueueRef
from tests.support.browser_pages import answer_dialogs, chromium, operator_page
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser


async def test_create_edit_and_run_a_scheduler_from_the_queue_page(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str, redis_client: Any
) -> None:
    peer("add", "--queue", "mail", "--name", "seed")
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/mail/")
        confirmations: list[str] = []
        page.on("dialog", lambda dialog: confirmations.append(dialog.message))
        answer_dialogs(page)
        new = page.get_by_test_id("new-scheduler")
        await new.locator("summary").click()
        form = new.get_by_test_id("scheduler-form")
        await form.get_by_label("Id").fill("digest")
        await form.get_by_label("Every").fill("1 h")
        await form.get_by_label("Start (UTC)").fill("2099-01-01T09:00")
        await form.get_by_label("Data (JSON)").fill('{"to": "team"}')
        await form.get_by_role("button", name="Create").click()
        await expect(page.locator("#toast")).to_have_text("Job scheduler digest created")
        row = page.locator('tr[data-scheduler-id="digest"]')
        await expect(row).to_contain_text("every 1 h")
        assert redis_client.hget("bull:mail:repeat:digest", "every") == "3600000"

        await row.get_by_test_id("edit-scheduler").locator("summary").click()
        edit = row.get_by_test_id("scheduler-form")
        await expect(edit.get_by_label("Data (JSON)")).to_have_value('{"to":"team"}')
        await edit.get_by_label("Every").fill("")
        await edit.get_by_label("or cron pattern").fill("0 9 * * 1-5")
        await edit.get_by_label("Time zone").fill("Europe/Paris")
        await edit.get_by_role("button", name="Save").click()
        await expect(page.locator("#toast")).to_have_text("Job scheduler digest updated")
        await expect(page.locator('tr[data-scheduler-id="digest"]')).to_contain_text("0 9 * * 1-5")
        assert redis_client.hget("bull:mail:repeat:digest", "tz") == "Europe/Paris"
        # The run the old settings made is replaced by the new settings' next run.
        (next_run,) = redis_client.zrange("bull:mail:delayed", 0, -1)
        assert redis_client.hget(f"bull:mail:{next_run}", "rjk") == "digest"

        before = redis_client.zscore("bull:mail:repeat", "digest")
        waiting = redis_client.llen("bull:mail:wait")
        run = page.locator('tr[data-scheduler-id="digest"]').get_by_test_id("run-scheduler")
        await run.click()
        await expect(page.locator("#toast")).to_contain_text("Job scheduler digest ran now: job")
        await expect(page.locator('tr[data-scheduler-id="digest"]')).to_be_visible()
        await page.get_by_test_id("new-scheduler").locator("summary").click()
    assert redis_client.llen("bull:mail:wait") == waiting + 1
    assert redis_client.zscore("bull:mail:repeat", "digest") == before
    assert any("Its schedule stays as it is" in text for text in confirmations)
    assert any("Create this job scheduler?" in text for text in confirmations)


async def test_a_due_scheduler_says_it_waits_for_a_worker(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    """With no worker, a scheduler's job is not taken and its next run does not move on: the
    page says it is due, not "4 s ago", on load and once a shown next run passes."""
    peer("add", "--queue", "mail", "--name", "seed")
    ref = QueueRef("bull", "mail")
    await upsert_scheduler(ref, "digest", {"every": 3_600_000}, "digest", {}, {})
    # The next run is still ahead when the page is rendered, however long a loaded machine
    # takes to get there; the page's clock is then moved past it rather than waited for.
    soon = int(time.time() * 1000) + 10 * 60_000
    await upsert_scheduler(ref, "soon", {"every": 3_600_000, "startDate": soon}, "soon", {}, {})
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/mail/")
        await page.clock.install()
        await page.reload()
        due = page.locator('tr[data-scheduler-id="digest"]').get_by_test_id("scheduler-next")
        await expect(due).to_have_text("due, waiting for a worker")
        later = page.locator('tr[data-scheduler-id="soon"]').get_by_test_id("scheduler-next")
        await expect(later).to_contain_text("in ")
        await expect(later.get_by_test_id("scheduler-due")).to_have_count(0)
        await page.clock.fast_forward("10:01")
        await expect(later).to_have_text("due, waiting for a worker")
