"""In Chromium: the delayed tab says when each job runs and the prioritized tab shows priority;
a completed job's earlier failures are muted and folded; a dead letter reads as one."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from playwright.async_api import Page, expect

from queues.runner import Producer, QueueOptions, Registry
from tests.support.browser import chromium
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer
from tests.support.worker_fixtures import Runners, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.shared_server]

WIDE, NARROW = 1300, 390
ABSOLUTE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$")


async def shoot(page: Page, name: str) -> None:
    """The page at desktop and phone width, for a person to look at."""
    for width in (WIDE, NARROW):
        await page.set_viewport_size({"width": width, "height": 900})
        # The page itself never scrolls sideways; a wide job table scrolls in its own box.
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
    table = page.locator(".scroll-x")
    if await table.count():
        await table.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    await page.set_viewport_size({"width": WIDE, "height": 900})


async def add(peer: Peer, queue: str, name: str, opts: dict[str, Any]) -> str:
    added = await asyncio.to_thread(
        peer, "add", "--queue", queue, "--name", name, "--data", "{}", "--opts", json.dumps(opts)
    )
    return str(added["id"])


async def row_ids(page: Page) -> list[str]:
    return await page.locator("table.jobs tbody tr").evaluate_all(
        "rows => rows.map(row => row.dataset.jobId)"
    )


async def test_delayed_jobs_say_when_they_run_and_prioritized_their_priority(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    in_59_min = await add(peer, "later", "remind", {"delay": 59 * 60_000})
    await add(peer, "later", "remind", {"delay": 5 * 60_000})
    await add(peer, "later", "remind", {"delay": 2 * 3_600_000})
    retry = await asyncio.to_thread(
        peer,
        "retry-later",
        "--queue",
        "later",
        "--name",
        "charge",
        "--backoff-ms",
        str(30 * 60_000),
        "--added-ms-ago",
        str(2 * 86_400_000),
    )
    for priority in (10, 1, 5):
        await add(peer, "images", "resize", {"priority": priority})
    node_asc = (await asyncio.to_thread(peer, "inspect", "--queue", "later", "--asc"))["jobs"]
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": WIDE, "height": 900})
        await page.goto(f"{bullpen_server.url}/queues/q/later/?state=delayed")
        await expect(page.locator("table.jobs thead th").nth(3)).to_have_text("Runs")
        runs = page.locator(f'tr[data-job-id="{in_59_min}"] td[data-field="dueAt"] time')
        await expect(runs.locator(".rel")).to_have_text(re.compile(r"^in 5[89] min$"))
        assert ABSOLUTE.match(await runs.get_attribute("title") or "")
        # A retry runs after its backoff, not at "added + delay" (two days ago).
        retried = page.locator(f'tr[data-job-id="{retry["id"]}"] td[data-field="dueAt"] .rel')
        await expect(retried).to_have_text(re.compile(r"^in (29|30) min$"))
        # The newest-due first by default; the other link is BullMQ's ascending order.
        await expect(page.locator(".listbar a.current")).to_contain_text(["latest due first"])
        await page.click("text=soonest due first")
        await expect(page.locator(".listbar a.current")).to_contain_text(["soonest due first"])
        assert await row_ids(page) == node_asc["delayed"]
        cells = await page.locator('td[data-field="dueAt"] time').evaluate_all(
            "times => times.map(t => Number(t.dataset.ms))"
        )
        assert cells == sorted(cells) and len(cells) == 4
        await shoot(page, "delayed")

        await page.click(f'a[href$="/jobs/{retry["id"]}/"]')
        fact = page.locator('#job-facts [data-field="dueAt"] time')
        await expect(fact.locator(".rel")).to_have_text(re.compile(r"^in (29|30) min$"))
        await expect(fact.locator(".abs")).to_be_visible()
        assert ABSOLUTE.match(await fact.locator(".abs").inner_text())
        await shoot(page, "delayed-job")

        await page.goto(f"{bullpen_server.url}/queues/q/images/?state=prioritized&order=asc")
        await expect(page.locator("table.jobs thead th").nth(3)).to_have_text("Priority")
        await expect(page.locator('td[data-field="priority"]')).to_have_text(["1", "5", "10"])
        await expect(page.locator(".listbar a.current")).to_contain_text(["highest priority first"])
        await shoot(page, "prioritized")
        await browser.close()


async def test_a_completed_job_s_earlier_failures_are_muted_and_folded(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    job_id = await add(peer, "mail", "send", {"attempts": 5})
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "1", "--fail-attempts", "1")
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": WIDE, "height": 900})
        await page.goto(f"{bullpen_server.url}/queues/q/mail/?state=completed")
        row = page.locator(f'tr[data-job-id="{job_id}"]')
        await expect(row.locator('[data-testid="succeeded-on"]')).to_have_text(
            "succeeded on attempt 2 of 5"
        )
        await expect(row.locator(".reason")).to_have_count(0)
        earlier = row.locator(".earlier-reason")
        await expect(earlier).to_be_hidden()
        await shoot(page, "completed-row")
        await row.locator("summary", has_text="Earlier attempts failed").click()
        await expect(earlier).to_have_text(f"attempt 1 of job {job_id} failed on purpose")

        await page.goto(f"{bullpen_server.url}/queues/q/mail/jobs/{job_id}/")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("completed")
        await expect(page.locator('[data-testid="succeeded-on"]')).to_have_text(
            "This job succeeded on attempt 2 of 5."
        )
        await expect(page.locator('[data-testid="facts-succeeded-on"]')).to_contain_text(
            "succeeded on attempt 2 of 5"
        )
        await expect(page.locator(".failure .reason")).to_have_count(0)
        folded = page.locator('[data-testid="earlier-failures"] .earlier-reason')
        await expect(folded).to_be_hidden()
        await shoot(page, "completed-job")
        await page.locator('[data-testid="earlier-failures"] > summary').click()
        await expect(folded).to_contain_text("failed on purpose")
        await expect(page.locator('[data-testid="earlier-failures"] summary')).to_contain_text(
            ["Earlier attempts failed", "Stack trace (attempt 1)"]
        )
        await shoot(page, "completed-job-open")
        await browser.close()


def _failing_registry() -> Registry:
    registry = Registry()

    async def deliver(payload: Any, ctx: Any) -> str:
        raise RuntimeError(f"endpoint <b>down</b> for {payload.get('url')}")

    registry.register("hooks", deliver, QueueOptions(attempts=2, backoff_ms=5))
    return registry


async def test_a_dead_letter_is_readable(
    runners: Runners, redis_client: Any, bullpen_server: LiveServer, chromium_path: str
) -> None:
    registry = _failing_registry()
    async with Producer(registry) as producer:
        await producer.add("hooks", "post", {"url": "https://a.example"}, job_id="hook-1")
    runner = await runners.start(registry)

    async def dead() -> bool:
        return bool(redis_client.exists("bull:dead-letter:hooks.hook-1"))

    await wait_for("the dead letter", dead)
    await runners.stop(runner)
    async with chromium(chromium_path) as browser:
        page = await browser.new_page(viewport={"width": WIDE, "height": 900})
        await page.goto(f"{bullpen_server.url}/queues/q/dead-letter/")
        row = page.locator('tr[data-job-id="hooks.hook-1"]')
        await expect(row.locator(".reason")).to_have_text(
            "endpoint <b>down</b> for https://a.example"
        )
        await expect(page.locator('[data-testid="dead-letter-workers"]')).to_contain_text(
            "no worker consumes it, by design"
        )
        await expect(page.locator('[data-testid="no-workers"]')).to_have_count(0)
        await shoot(page, "dead-letter-queue")

        await row.locator("a").first.click()
        section = page.locator('[data-testid="dead-letter"]')
        await expect(section.locator('[data-testid="dead-letter-reason"]')).to_have_text(
            "endpoint <b>down</b> for https://a.example"
        )
        await expect(section.locator("b")).to_have_count(0)
        stack = section.locator('[data-testid="dead-letter-stack"]')
        await expect(stack).to_contain_text("Traceback (most recent call last):")
        # One line of the trace per line on screen: the newlines are real.
        height = await stack.evaluate("pre => pre.getBoundingClientRect().height")
        line = await stack.evaluate("pre => parseFloat(getComputedStyle(pre).lineHeight)")
        assert height > 4 * line
        failed_at = section.locator('[data-testid="failed-at"] time')
        assert ABSOLUTE.match(await failed_at.get_attribute("title") or "")
        await expect(failed_at.locator(".rel")).to_have_text(re.compile(r" ago$"))
        await shoot(page, "dead-letter-job")

        await section.locator('[data-testid="original-job"] a').click()
        await expect(page).to_have_url(f"{bullpen_server.url}/queues/q/hooks/jobs/hook-1/")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")

        # Removed since: the page says so instead of linking to nothing.
        redis_client.delete("bull:hooks:hook-1")
        redis_client.zrem("bull:hooks:failed", "hook-1")
        await page.goto(f"{bullpen_server.url}/queues/q/dead-letter/jobs/hooks.hook-1/")
        original = page.locator('[data-testid="original-job"]')
        await expect(original).to_contain_text("removed from hooks since")
        await expect(original.locator("a")).to_have_count(0)
        await browser.close()
