"""In Chromium: what on-call reads is true. The figures of the last hour agree wherever a page
shows them (the overview row's sparkline tooltip, its failed-in-the-last-hour alert badge, the
queue page's throughput totals), as the finished sets hold them; a server just started claims
no quiet minutes it did not count; a retried failure stays in its group."""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, ConsoleMessage, expect

from queues.runner import Producer, QueueOptions, Registry
from queues.throughput.sampler import MINUTE_MS
from tests.alerts.test_failure_frames import _charge
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, start_bullpen, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.worker_fixtures import Runners, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.shared_server]


def _work(peer: Peer, count: int, *flags: str) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", str(count))
    peer(
        "work", "--queue", "mail", "--count", str(count), "--concurrency", "10", "--metrics",
        "1440", *flags,
    )  # fmt: skip


async def test_the_last_hours_figures_agree_on_every_page(
    peer: Peer, bullpen_server: LiveServer, browser: Browser, redis_client: Any
) -> None:
    """Real Node workers with BullMQ's metrics on, their clocks behind for earlier minutes:
    60 failures ten minutes ago, 3 completions three minutes ago, 50 failures in the minute
    still open (BullMQ's list has not closed it)."""
    await asyncio.to_thread(_work, peer, 60, "--fail", "--clock-behind-ms", "600000")
    await asyncio.to_thread(_work, peer, 3, "--clock-behind-ms", "180000")
    await asyncio.to_thread(_work, peer, 50, "--fail")
    now = int(time.time() * 1000)
    since = now - now % MINUTE_MS - 59 * MINUTE_MS
    failed = int(redis_client.zcount("bull:mail:failed", since, "+inf"))
    completed = int(redis_client.zcount("bull:mail:completed", since, "+inf"))
    assert (completed, failed) == (3, 110)

    page = await (await browser.new_context(viewport={"width": 1300, "height": 900})).new_page()
    await page.goto(f"{bullpen_server.url}/queues/")
    row = page.locator('tr[data-queue="mail"]')
    tooltip = await row.locator(".spark-cell").get_attribute("title")
    assert tooltip == "last hour: 3 completed, 110 failed (bullmq-metrics)"
    badge = row.locator('.badge.alert[data-rule="failed_last_hour"]')
    await expect(badge).to_have_count(1)
    assert re.search(r"\b110$", (await badge.inner_text()).strip())

    await page.goto(f"{bullpen_server.url}/queues/q/mail/?state=failed")
    totals = page.get_by_test_id("throughput").locator("h2 .muted")
    await expect(totals).to_have_text(
        "3 completed · 110 failed · failure rate 97% · from bullmq-metrics"
    )


def _note_error(errors: list[str], message: ConsoleMessage) -> None:
    if message.type == "error":
        errors.append(message.text)


async def test_a_fresh_server_shades_the_minutes_it_did_not_count(
    peer: Peer, redis_server: RedisServer, browser: Browser, tmp_path: Path
) -> None:
    """Three jobs fail (Node workers without BullMQ's metrics) before the server starts. Its
    chart used to say "0 failed" beside an alert of 3; now the hour is shaded as not sampled
    and the 3 are named as the alert counts them, wide and on a 390 px phone."""
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "3")
    peer("work", "--queue", "mail", "--count", "3", "--fail")
    alerting = {"BULLPEN_TEST_EXTRA": json.dumps({"ALERTS": {"failed_last_hour": 2}})}
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", extra_env=alerting)
    try:
        for name, viewport in (("wide", (1300, 900)), ("phone", (390, 844))):
            width, height = viewport
            context = await browser.new_context(viewport={"width": width, "height": height})
            page = await context.new_page()
            errors: list[str] = []
            page.on("console", functools.partial(_note_error, errors))
            await page.goto(f"{server.url}/queues/q/mail/?state=failed")
            if name == "phone":  # folded under one line each, the jobs on the first screen
                await page.get_by_test_id("alerts-fold").locator("summary").click()
                await page.get_by_test_id("throughput-fold").locator("summary").click()
            alert = page.locator('[data-rule="failed_last_hour"] [data-testid="alert-what"]')
            await expect(alert).to_have_text("3 jobs failed in the last hour, more than 2")
            chart = page.get_by_test_id("throughput")
            await expect(chart.locator("h2 .muted")).to_have_text(
                "no minute sampled yet · from bullpen-samples"
            )
            await expect(page.get_by_test_id("throughput-unsampled")).to_have_text(
                "Shaded: minutes the live reader did not count. "
                "In them, 3 jobs failed (from the failed set, as the alert counts)."
            )
            shaded = chart.locator("svg.spark .unsampled")  # the whole hour, drawn
            assert await shaded.evaluate("r => [r.getAttribute('x'), r.getAttribute('width')]") == [
                "0.0",
                "720.0",
            ]
            box = await shaded.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 40, box
            assert await chart.locator("svg.spark .failed").get_attribute("d") == ""
            assert not [error for error in errors if "path" in error], errors
            wider = await page.evaluate("document.documentElement.scrollWidth - innerWidth")
            assert wider <= 0, wider
            await page.screenshot(path=tmp_path / f"chart-{name}.png", full_page=True)
            await context.close()
    finally:
        stop_bullpen(server, graceful=False)


async def test_a_retried_job_with_a_long_traceback_shows_in_its_handlers_group(
    runners: Runners, bullpen_server: LiveServer, browser: Browser, redis_client: Any
) -> None:
    """Bullpen's Python runner: one job failing once, one failing twice, each with a traceback
    of several kilobytes. The failed tab shows one group, named after the handler's frame."""
    registry = Registry()

    @registry.handler("payments", QueueOptions(attempts=2, backoff_ms=10))
    async def charge(payload: dict[str, Any]) -> None:
        _charge(payload)

    async with Producer(registry) as producer:
        await producer.add("payments", "charge", {"order": 1}, attempts=1)
        await producer.add("payments", "charge", {"order": 2})
    await runners.start(registry)

    async def failed() -> bool:
        return int(redis_client.zcard("bull:payments:failed")) == 2

    await wait_for("two failed charges", failed)
    page = await (await browser.new_context(viewport={"width": 1300, "height": 900})).new_page()
    await page.goto(f"{bullpen_server.url}/queues/q/payments/?state=failed")
    groups = page.get_by_test_id("failure-groups")
    await expect(groups.locator("tbody tr")).to_have_count(1)
    row = groups.locator("tbody tr").first
    await expect(row.locator(".count")).to_have_text("2")
    await expect(row.locator(".where")).to_have_text("test_failure_frames.py in _charge")
    await expect(row.locator(".reason")).to_have_text("card declined for order <n>")
