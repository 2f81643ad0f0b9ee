"""In Chromium: a dead letter shows its original job's state now (in the dead-letter queue's
rows and on its page), and the dead letters whose original completed since can be dropped, an
audited action done through bullmq's remove."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from queues.actions.job_actions import retry_job
from queues.reads.keys import QueueRef
from queues.runner import Producer, QueueOptions, Registry
from tests.support.browser_pages import answer_dialogs, chromium, operator_page
from tests.support.servers.live_server import LiveServer
from tests.support.worker_fixtures import Runners, wait_for

pytestmark = pytest.mark.browser


async def test_dead_letters_show_their_originals_state_and_settled_ones_drop(
    runners: Runners, redis_client: Any, bullpen_server: LiveServer, chromium_path: str
) -> None:
    paid: set[int] = set()
    registry = Registry()

    @registry.handler("payments", QueueOptions(attempts=1))
    async def charge(payload: dict[str, int]) -> str:
        if payload["order"] not in paid:
            raise RuntimeError("card declined")
        return "paid"

    async with Producer(registry) as producer:
        for order in (7, 8):
            await producer.add("payments", "charge", {"order": order}, job_id=f"charge-{order}")
    await runners.start(registry)

    async def dead() -> bool:
        return int(redis_client.llen("bull:dead-letter:wait")) == 2

    await wait_for("two dead letters", dead)
    # Charge 7 is retried in its own queue, and completes: its dead letter stays.
    paid.add(7)
    await retry_job(QueueRef("bull", "payments"), "charge-7")

    async def completed() -> bool:
        return redis_client.zscore("bull:payments:completed", "charge-7") is not None

    await wait_for("charge 7 to complete", completed)

    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/dead-letter/")
        settled = page.locator('tr[data-job-id="payments.charge-7"]')
        still_dead = page.locator('tr[data-job-id="payments.charge-8"]')
        await expect(settled.get_by_test_id("original-state")).to_have_text("original: completed")
        await expect(still_dead.get_by_test_id("original-state")).to_have_text("original: failed")

        await settled.locator("a").first.click()
        await expect(page.get_by_test_id("original-job-state")).to_contain_text("completed")
        await page.go_back()

        confirmations: list[str] = []
        page.on("dialog", lambda dialog: confirmations.append(dialog.message))
        answer_dialogs(page)
        await page.get_by_test_id("drop-completed-dead-letters").click()
        await expect(page.locator("#toast")).to_have_text(
            "1 dead letter dropped: its original completed"
        )
        assert confirmations == [
            "Remove every dead letter whose original job has completed since? "
            "This cannot be undone."
        ]
        await expect(settled).to_have_count(0)
        await expect(still_dead).to_have_count(1)
        assert redis_client.exists("bull:dead-letter:payments.charge-7") == 0
        assert redis_client.exists("bull:dead-letter:payments.charge-8") == 1
        assert redis_client.zscore("bull:payments:completed", "charge-7") is not None

        await page.goto(f"{bullpen_server.url}/queues/audit/")
        entry = page.locator("tr", has_text="drop-completed-dead-letters")
        await expect(entry).to_have_count(1)
        await expect(entry).to_contain_text("payments.charge-7")
