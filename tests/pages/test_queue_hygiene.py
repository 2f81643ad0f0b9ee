"""Queue hygiene with real Node BullMQ queues: a queue keeping 1,200 completed jobs is warned
(removeOnComplete), one whose jobs remove themselves is not; workers without the metrics option
are warned, workers recording metrics are not; an events stream trimmed to a small cap is
warned (streams.events.maxLen); a job scheduler is not taken for a legacy repeatable. Read
through the info API, the queue page's section (in German too) and, in Chromium, the page."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from bullmq import Queue
from django.test import AsyncClient
from playwright.async_api import expect

from tests.support.action_requests import AUTH, node
from tests.support.browser_pages import chromium, operator_page
from tests.support.markup import attribute, elements, text
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer
from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)

KEPT = 1200


async def info(client: AsyncClient, queue: str) -> dict[str, Any]:
    response = await client.get(f"/queues/api/queues/{queue}/info/", headers=AUTH)
    assert response.status_code == 200, response.content[:300]
    body: dict[str, Any] = response.json()
    return body


def codes(body: dict[str, Any]) -> list[str]:
    return [warning["code"] for warning in body["warnings"]]


async def finish(peer: Peer, queue: str, count: int, *flags: str, opts: str = "{}") -> None:
    """``count`` jobs added by Node BullMQ and completed by a Node worker."""
    await node(
        peer, "add-bulk", "--queue", queue, "--name", "n", "--count", str(count), "--opts", opts
    )
    done = await node(
        peer,
        "work",
        "--queue",
        queue,
        "--count",
        str(count),
        "--concurrency",
        "50",
        "--timeout-ms",
        "90000",
        *flags,
    )
    assert done["completed"] == count


async def test_a_queue_keeping_every_completed_job_is_warned_and_one_removing_them_is_not(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await asyncio.gather(
        finish(peer, "keeps", KEPT),
        finish(peer, "tidy", KEPT, "--metrics", "60", opts='{"removeOnComplete": {"count": 100}}'),
    )

    keeps = await info(client, "keeps")
    assert keeps["completedKept"] == KEPT and keeps["failedKept"] == 0
    assert keeps["meta"]["version"].startswith("bullmq:")
    assert (keeps["meta"]["maxLenEvents"], keeps["meta"]["paused"]) == (10_000, False)
    assert keeps["defaultJobOptions"] is None  # BullMQ keeps them in the producer only
    assert keeps["eventsLength"] == redis_client.xlen("bull:keeps:events")
    assert keeps["metricsRecorded"] is False and keeps["legacyRepeatables"] == 0
    assert codes(keeps) == ["keeps-completed", "no-metrics"]
    kept, no_metrics = keeps["warnings"]
    assert (kept["option"], kept["kept"]) == ("removeOnComplete", KEPT)
    assert kept["text"].startswith("1,200 completed jobs are kept in Redis: set removeOnComplete")
    assert no_metrics["option"] == "metrics" and "metrics option" in no_metrics["text"]

    # One pipelined round trip beside the queue's lookup (a SCAN): BullMQ's reads and the
    # legacy-repeatable script, sent by its digest with no SCRIPT EXISTS before it.
    redis_client.config_resetstat()
    await info(client, "keeps")
    calls = {
        name.removeprefix("cmdstat_"): stat["calls"]
        for name, stat in redis_client.info("commandstats").items()
    }
    calls.pop("config|resetstat")
    assert calls == {
        "scan": 1,
        "hgetall": 1,
        "xlen": 1,
        "zcard": 2,
        "exists": 1,
        "evalsha": 1,
        "zrange": 1,  # inside the script
    }

    tidy = await info(client, "tidy")
    assert tidy["completedKept"] == 100 and tidy["metricsRecorded"] is True
    assert tidy["warnings"] == []

    # The queue page's section says the same, in the page's language.
    section = await client.get(
        "/queues/q/keeps/hygiene/", headers={**AUTH, "Accept-Language": "de"}
    )
    assert section.status_code == 200
    warned = elements(section.content.decode(), "li", data_testid="hygiene-warning")
    assert [attribute(w, "data-code") for w in warned] == ["keeps-completed", "no-metrics"]
    assert "1.200" in text(warned[0]) and "removeOnComplete" in text(warned[0])
    assert "Redis" in text(warned[0]) and "are kept" not in text(warned[0])
    calm = (await client.get("/queues/q/tidy/hygiene/", headers=AUTH)).content.decode()
    assert not elements(calm, "li", data_testid="hygiene-warning")
    assert "nothing to change" in calm


async def test_an_events_stream_at_a_small_cap_is_warned(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(
        peer,
        "add-bulk",
        "--queue",
        "chatty",
        "--name",
        "n",
        "--count",
        "300",
        "--max-len-events",
        "20",
    )
    body = await info(client, "chatty")
    assert body["meta"]["maxLenEvents"] == 20
    length = redis_client.xlen("bull:chatty:events")
    # BullMQ trims approximately: whole stream nodes, never below the cap.
    assert body["eventsLength"] == length and 20 <= length < 300
    assert codes(body) == ["events-at-cap"]
    [warning] = body["warnings"]
    assert (warning["option"], warning["length"], warning["cap"]) == (
        "streams.events.maxLen",
        length,
        20,
    )
    assert "streams.events.maxLen" in warning["text"]


async def test_a_job_scheduler_is_no_legacy_repeatable_and_an_unknown_queue_is_404(
    client: AsyncClient, peer: Peer, redis_server: RedisServer
) -> None:
    # BullMQ 6.7 (Node) and bullmq 3.4 (Python) make only job schedulers: neither can still
    # add a legacy repeatable job, so the warning's decision is unit-tested on its figures.
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    queue = Queue("nightly", {"connection": connection})
    try:
        await queue.upsertJobScheduler("report", {"every": 3_600_000}, "report", {}, {})
    finally:
        await queue.close()
        await connection.aclose()
    body = await info(client, "nightly")
    assert body["legacyRepeatables"] == 0 and "legacy-repeatable" not in codes(body)
    missing = await client.get("/queues/api/queues/nowhere/info/", headers=AUTH)
    assert missing.status_code == 404 and missing.json() == {"error": "Unknown queue 'nowhere'"}


@pytest.mark.browser
async def test_the_queue_page_shows_its_hygiene_and_warning(
    peer: Peer, bullpen_server: LiveServer, chromium_path: str
) -> None:
    await finish(peer, "keeps", KEPT)
    async with chromium(chromium_path) as browser:
        page = await operator_page(browser, bullpen_server, "/queues/q/keeps/")
        section = page.get_by_test_id("hygiene")
        await expect(section.get_by_test_id("hygiene-completed")).to_have_text("1,200")
        warned = section.locator('[data-testid="hygiene-warning"][data-code="keeps-completed"]')
        await expect(warned).to_contain_text("removeOnComplete")
        await expect(section.get_by_test_id("hygiene-summary")).to_have_text("2 warnings")
        # Readable on a phone: nothing of the section wider than the screen.
        await page.set_viewport_size({"width": 360, "height": 800})
        await section.scroll_into_view_if_needed()
        width = await section.evaluate("(el) => el.scrollWidth <= el.clientWidth")
        assert width is True
