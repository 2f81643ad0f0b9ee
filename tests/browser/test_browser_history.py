"""In Chromium: a queue's history. The figures the page shows agree with what the history
read returns (the API's source), the range switcher and the job-name table's order work by
links, job names are escaped, a phone reads the page without scrolling sideways, and axe-core
finds nothing on the section in either colour scheme."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from dashboard.history.scales import duration_text
from queues.history.read import read_history, read_names
from queues.history.record import NameRecord, dumps_span
from queues.history.sketch import Sketch
from queues.history.storage import MINUTE_MS, MINUTE_TTL_S, span_key
from queues.reads.keys import QueueRef
from tests.support.browser_checks import RULES, axe_violations
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.shared_server]

HOSTILE = '<img src=x onerror="window.pwned=1">'


def _record(
    completed: int, failed: int, waits: list[float], runs: list[float], ids: str
) -> NameRecord:
    return NameRecord(
        completed=completed,
        failed=failed,
        wait=Sketch.of(waits),
        run=Sketch.of(runs),
        slowest=[(f"{ids}{i + 1}", run) for i, run in enumerate(sorted(runs, reverse=True)[:3])],
    )


def _write_minutes(redis_client: Any, now_ms: int) -> None:
    """Three job names over the last hour, one of them hostile markup; minute 20 is empty.
    The slowest runs of "send" are those of the newest minute, jobs 1, 2 and 3 (real ones)."""
    ref = QueueRef.from_slug("mail")
    newest = now_ms - now_ms % MINUTE_MS
    for back in range(0, 45):
        if back == 20:
            continue
        start = newest - back * MINUTE_MS
        span = {
            "send": _record(
                10 + back % 7,
                back % 3,
                [50.0 + back, 120.0, 900.0],
                [200.0, 1544.0 - back],
                "" if back == 0 else f"s{back}-",
            ),
            "digest": _record(
                2, 1 if back % 10 == 0 else 0, [3000.0], [45_000.0 + back * 100], f"d{back}-"
            ),
        }
        if back % 5 == 0:
            span[HOSTILE] = _record(1, 1, [10.0], [20.0], f"h{back}-")
        redis_client.set(span_key(ref, "m", start), dumps_span(span), ex=MINUTE_TTL_S)


async def _check_totals(page: Page, ref: QueueRef, range_name: str, now_ms: int) -> None:
    series = await read_history(ref, range_name, now_ms)
    totals = page.get_by_test_id("history-totals")
    assert await totals.get_by_test_id("total-completed").get_attribute("data-value") == str(
        series.totals.completed
    )
    assert await totals.get_by_test_id("total-failed").get_attribute("data-value") == str(
        series.totals.failed
    )
    for kind in ("wait", "run"):
        found = getattr(series.totals, f"{kind}_ms")
        for q in ("p50", "p95", "p99"):
            cell = totals.get_by_test_id(f"total-{kind}-{q}")
            assert float(await cell.get_attribute("data-value")) == getattr(found, q)
            await expect(cell).to_have_text(duration_text(getattr(found, q)))
    # The jobs chart's spoken summary holds the same totals.
    summary = (
        await page.get_by_test_id("chart-jobs").locator("svg.chart").get_attribute("aria-label")
    )
    assert f"{series.totals.completed:,} completed, {series.totals.failed:,} failed" in summary


async def test_the_history_page_shows_the_recorded_figures(
    peer: Peer, bullpen_server: LiveServer, browser: Browser, redis_client: Any
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "3")
    now_ms = int(time.time() * 1000)
    _write_minutes(redis_client, now_ms)
    ref = QueueRef.from_slug("mail")

    context = await browser.new_context(viewport={"width": 1300, "height": 900}, bypass_csp=True)
    page = await context.new_page()
    await page.goto(f"{bullpen_server.url}/queues/q/mail/history/?range=1h")
    await expect(page.get_by_test_id("history")).to_have_attribute("data-range", "1h")
    await _check_totals(page, ref, "1h", now_ms)
    assert await axe_violations(page, RULES["light"]) == []

    # Each minute's hover names its figures; the minute without a record says none.
    hovers = page.get_by_test_id("chart-jobs").locator(".hovers rect title")
    assert await hovers.count() == 60  # every minute of the hour, those without jobs too
    texts = await hovers.all_text_contents()
    newest = now_ms - now_ms % MINUTE_MS

    def hover(back: int) -> str:
        label = datetime.fromtimestamp((newest - back * MINUTE_MS) / 1000, UTC).strftime("%H:%M")
        return next(text for text in texts if text.startswith(f"{label}: "))

    assert hover(0).endswith(": 13 completed, 2 failed")  # send 10, digest 2 + 1, other 1 + 1
    assert hover(20).endswith(": 0 completed, 0 failed")

    # Job names: escaped, sorted by runs, then by wait p95 with a click, links to the job pages.
    table = page.get_by_test_id("history-names")
    names = table.locator("tbody tr")
    assert await names.evaluate_all("rows => rows.map(r => r.dataset.name)") == [
        "send",
        "digest",
        HOSTILE,
    ]
    assert await page.evaluate("window.pwned") is None
    await table.locator('th a[data-sort="wait_p95"]').click()
    await expect(page).to_have_url(
        f"{bullpen_server.url}/queues/q/mail/history/?range=1h&sort=-wait_p95"
    )
    await expect(names.first).to_have_attribute("data-name", "digest")
    await table.locator('th a[data-sort="wait_p95"]').click()
    await expect(names.first).to_have_attribute("data-name", HOSTILE)
    table_rows = await read_names(ref, "1h", now_ms)
    send = next(r for r in table_rows.names if r.name == "send")
    slow = table.locator('tr[data-name="send"] td.slowest a').first
    assert await slow.get_attribute("data-job") == send.slowest[0].id
    await slow.click()
    await expect(page).to_have_url(f"{bullpen_server.url}/queues/q/mail/jobs/{send.slowest[0].id}/")

    # The range switcher: a week by the hour holds the same jobs.
    await page.goto(f"{bullpen_server.url}/queues/q/mail/history/?range=1h")
    await page.get_by_test_id("range-switch").locator('a[data-range="7d"]').click()
    await expect(page.get_by_test_id("history")).to_have_attribute("data-range", "7d")
    await expect(
        page.get_by_test_id("range-switch").locator('[aria-current="page"]')
    ).to_have_attribute("data-range", "7d")
    await _check_totals(page, ref, "7d", now_ms)

    # Dark: the axis words take the dark scheme's muted colour and stay readable.
    await page.emulate_media(color_scheme="dark")
    await page.goto(f"{bullpen_server.url}/queues/q/mail/history/?range=1h")
    fill = await page.locator(".chart .grid-lines text").first.evaluate(
        "t => getComputedStyle(t).fill"
    )
    assert fill == "rgb(160, 167, 178)"
    assert await axe_violations(page, RULES["dark"]) == []
    await context.close()


async def test_the_queue_page_opens_its_history_and_a_phone_reads_it(
    peer: Peer, bullpen_server: LiveServer, browser: Browser, redis_client: Any
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "3")
    _write_minutes(redis_client, int(time.time() * 1000))
    context = await browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, bypass_csp=True
    )
    page = await context.new_page()
    await page.goto(f"{bullpen_server.url}/queues/q/mail/")
    fold = page.get_by_test_id("history-fold")
    await fold.locator("summary").click()
    section = fold.get_by_test_id("history")
    await expect(section).to_have_attribute("data-range", "24h")
    await expect(section.get_by_test_id("chart-run_ms")).to_be_visible()
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    await page.goto(f"{bullpen_server.url}/queues/q/mail/history/?range=1h")
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    assert await axe_violations(page, RULES["phone"]) == []
    await context.close()


async def test_a_bad_range_is_refused(
    bullpen_server: LiveServer, browser: Browser, peer: Peer
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "1")
    page = await browser.new_page()
    response = await page.goto(f"{bullpen_server.url}/queues/q/mail/history/?range=2y")
    assert response is not None and response.status == 400
    response = await page.goto(f"{bullpen_server.url}/queues/q/nothing/history/")
    assert response is not None and response.status == 404


async def test_the_overview_shows_p95_wait_and_oldest_waiting_when_chosen(
    peer: Peer, bullpen_server: LiveServer, browser: Browser, redis_client: Any
) -> None:
    peer("add-bulk", "--queue", "mail", "--name", "send", "--count", "3")
    peer("add-bulk", "--queue", "idle", "--name", "send", "--count", "1")
    now_ms = int(time.time() * 1000)
    _write_minutes(redis_client, now_ms)
    page = await browser.new_page()
    await page.goto(f"{bullpen_server.url}/queues/")
    await expect(page.locator("th[data-history-column]")).to_have_count(0)
    tools = page.get_by_test_id("history-columns")
    await tools.locator('input[value="wait_p95"]').check()
    await tools.locator('input[value="oldest"]').check()
    await expect(page.locator("th[data-history-column]")).to_have_count(2)
    assert "columns=wait_p95" in page.url and "columns=oldest" in page.url

    ref = QueueRef.from_slug("mail")
    series = await read_history(ref, "1h", now_ms)
    wait = page.locator('tr[data-queue="mail"] td[data-history="wait_p95"]')
    assert float(await wait.get_attribute("data-value")) == series.totals.wait_ms.p95
    await expect(wait).to_have_text(duration_text(series.totals.wait_ms.p95))
    # The same figure as the queue's history page shows for the hour.
    oldest = page.locator('tr[data-queue="mail"] td[data-history="oldest"]')
    shown = int(await oldest.get_attribute("data-value"))
    assert 0 <= shown <= int(time.time() * 1000) - now_ms + 60_000
    # A queue with no history: a dash, not a zero.
    await expect(page.locator('tr[data-queue="idle"] td[data-history="wait_p95"]')).to_have_text(
        "\u2013"
    )

    response = await page.goto(f"{bullpen_server.url}/queues/?columns=wait_p95,nonsense")
    assert response is not None and response.status == 400
