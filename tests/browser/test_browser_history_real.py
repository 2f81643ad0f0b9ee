"""In Chromium: a queue's history as Bullpen's own live reader recorded it from real Node
BullMQ workers. Every figure the page shows (totals, each minute's hover, the job names'
rows and their slowest jobs) is the one the history API answers, whatever the range."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from dashboard.history.scales import duration_text, percent_text
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = pytest.mark.browser

# The workers' clocks run this far behind: their jobs finish in minutes already closed when
# the reader starts, which it back-fills from the jobs BullMQ keeps and writes at once.
BEHIND_MS = 180_000


@pytest.fixture
def worked(peer: Peer) -> None:
    """Before Bullpen starts: 20 "send" jobs of 60 ms and 5 "resize" jobs failing after 150."""
    behind = ["--clock-behind-ms", str(BEHIND_MS)]
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "20")
    peer("work", "--queue", "mail", "--count", "20", "--delay-ms", "60", *behind)
    peer("add-bulk", "--queue", "mail", "--name", "resize", "--count", "5")
    peer("work", "--queue", "mail", "--count", "5", "--delay-ms", "150", "--fail", *behind)


async def _api(page: Page, url: str) -> dict[str, Any]:
    answer = await page.request.get(url)
    assert answer.ok, await answer.text()
    body: dict[str, Any] = await answer.json()
    return body


async def _recorded(page: Page, base: str) -> dict[str, Any]:
    """The hour's series once the reader has written the 25 jobs (it starts with the page)."""
    deadline = time.monotonic() + 60
    while True:
        body = await _api(page, f"{base}/queues/api/queues/mail/history/?range=1h")
        if (body["totals"]["completed"], body["totals"]["failed"]) == (20, 5):
            return body
        assert time.monotonic() < deadline, body["totals"]
        await asyncio.sleep(0.5)


async def _value(page: Page, test_id: str) -> str | None:
    return await page.get_by_test_id(test_id).get_attribute("data-value")


def _same(shown: str | None, answered: float | None) -> bool:
    return (shown in ("", None)) if answered is None else float(shown or "nan") == answered


async def _check_totals(page: Page, body: dict[str, Any]) -> None:
    totals = body["totals"]
    assert await _value(page, "total-completed") == str(totals["completed"])
    assert await _value(page, "total-failed") == str(totals["failed"])
    assert _same(await _value(page, "total-failure-rate"), totals["failure_rate"])
    await expect(page.get_by_test_id("total-failure-rate")).to_have_text(
        percent_text(totals["failure_rate"])
    )
    for kind in ("wait", "run"):
        for q, answered in totals[f"{kind}_ms"].items():
            assert _same(await _value(page, f"total-{kind}-{q}"), answered), (kind, q)
            await expect(page.get_by_test_id(f"total-{kind}-{q}")).to_have_text(
                duration_text(answered) or "\u2013"
            )
    assert _same(await _value(page, "total-oldest"), body["oldest_waiting_ms"])
    summary = (
        await page.get_by_test_id("chart-jobs").locator("svg.chart").get_attribute("aria-label")
    )
    assert f"{totals['completed']} completed, {totals['failed']} failed in all" in (summary or "")


async def test_the_page_shows_what_the_reader_recorded_as_the_api_answers(
    worked: None, bullpen_server: LiveServer, browser: Browser
) -> None:
    base = bullpen_server.url
    page = await (await browser.new_context(viewport={"width": 1300, "height": 900})).new_page()
    await page.goto(f"{base}/queues/")  # the first request starts the live reader
    body = await _recorded(page, base)
    # The jobs took the time they were given: 60 ms runs for send, 150 ms for resize.
    assert 60 <= body["totals"]["run_ms"]["p50"] <= 150 * 1.02 + 20

    await page.goto(f"{base}/queues/q/mail/history/?range=1h")
    await _check_totals(page, body)

    # Each minute with jobs: its hover says the API's counts and its failure rate.
    titles = await page.get_by_test_id("chart-jobs").locator(".hovers title").all_text_contents()
    rates = await page.get_by_test_id("chart-rate").locator(".hovers title").all_text_contents()
    busy = [p for p in body["points"] if p["completed"] or p["failed"]]
    assert busy and sum(p["completed"] for p in busy) == 20
    for point in busy:
        label = datetime.fromtimestamp(point["t"] / 1000, UTC).strftime("%H:%M")
        said = next(t for t in titles if t.startswith(f"{label}: "))
        assert said == f"{label}: {point['completed']} completed, {point['failed']} failed"
        finished = point["completed"] + point["failed"]
        rate = percent_text(point["failed"] / finished)
        assert f"{label}: failure rate {rate} ({point['failed']} of {finished})" in rates

    # The job names: the API's rows, in the page's order by runs, the slowest jobs linked.
    names = await _api(page, f"{base}/queues/api/queues/mail/history/names/?range=1h")
    table = page.get_by_test_id("history-names")
    order = await table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.name)")
    assert order == ["send", "resize"]
    for row in names["names"]:
        cells = table.locator(f'tr[data-name="{row["name"]}"] td[data-value]')
        shown = await cells.evaluate_all("cells => cells.map(c => c.dataset.value)")
        answered = [row["completed"] + row["failed"], row["failed"], row["failure_rate"]]
        answered += [row[k][q] for k in ("wait_ms", "run_ms") for q in ("p50", "p95", "p99")]
        assert all(_same(s, a) for s, a in zip(shown, answered, strict=True)), (shown, answered)
        links = table.locator(f'tr[data-name="{row["name"]}"] td.slowest a')
        assert await links.evaluate_all("links => links.map(a => a.dataset.job)") == [
            slow["id"] for slow in row["slowest"]
        ]
    resize = table.locator('tr[data-name="resize"] td.slowest a').first
    job_id = await resize.get_attribute("data-job")
    await resize.click()
    await expect(page).to_have_url(f"{base}/queues/q/mail/jobs/{job_id}/")
    await expect(page.locator("body")).to_contain_text("resize")

    # The same jobs a week by the hour, after the switch: the API's week.
    await page.goto(f"{base}/queues/q/mail/history/?range=1h")
    await page.get_by_test_id("range-switch").locator('a[data-range="7d"]').click()
    await expect(page.get_by_test_id("history")).to_have_attribute("data-range", "7d")
    await _check_totals(page, await _api(page, f"{base}/queues/api/queues/mail/history/?range=7d"))
