"""REDACT with real parts: Node BullMQ writes jobs holding secrets, and no way a job leaves the
server (lists, job page, copy, download, API, search, failure groups, schedulers, websocket
rows, job updates and progress, the page in Chromium) carries them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis.asyncio as aioredis
from bullmq import Queue
from channels.testing import WebsocketCommunicator
from django.test import AsyncClient, override_settings
from playwright.async_api import expect

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from queues.reads.redaction import MARKER
from tests.support.browser import chromium
from tests.support.live_reads import counts_of, follower_tails_log, run_peer, wait_for
from tests.support.peer import Peer
from tests.support.search_reads import stream
from tests.support.servers.live_server import LiveServer, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import CREDENTIALS, start_standalone

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "hunter2-pw-9f3a"  # noqa: S105 - the secret the tests look for
CARD = "4111-1111-1111-1111"
TOKEN = "ghp-token-77c1"  # noqa: S105 - the secret the tests look for
SECRETS = (PASSWORD, CARD, TOKEN)
DATA = {
    "user": "ada",
    "password": PASSWORD,
    "card": {"number": CARD, "exp": "12/30"},
    "github": {"token": TOKEN, "org": "acme"},
}
PATHS = ["data.password", "data.card.number", "data.*.token", "returnvalue.ok", "progress.stage"]


@pytest.fixture
def redacting(bullpen_settings: dict[str, Any]) -> Iterator[None]:
    with override_settings(BULLPEN={**bullpen_settings, "REDACT": PATHS}):
        yield


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def add(peer: Peer, queue: str, data: Any = DATA, job_id: str | None = None) -> str:
    args = ["add", "--queue", queue, "--name", "charge", "--data", json.dumps(data)]
    if job_id:
        args += ["--opts", json.dumps({"jobId": job_id})]
    return str(peer(*args)["id"])


def masked_data() -> dict[str, Any]:
    return {
        "user": "ada",
        "password": MARKER,
        "card": {"number": MARKER, "exp": "12/30"},
        "github": {"token": MARKER, "org": "acme"},
    }


async def test_lists_job_page_copy_download_and_api_are_masked(
    redacting: None, client: AsyncClient, peer: Peer
) -> None:
    job_id = add(peer, "pay")

    listed = await client.get("/queues/api/queues/pay/jobs/?state=waiting")
    (row,) = listed.json()["jobs"]
    assert row["data"] == masked_data() and row["redacted"] == ["data"]
    assert leaks(listed.content.decode()) == []

    queue_page = (await client.get("/queues/q/pay/?state=waiting")).content.decode()
    assert MARKER in queue_page and leaks(queue_page) == []

    job_page = (await client.get(f"/queues/q/pay/jobs/{job_id}/")).content.decode()
    assert leaks(job_page) == []
    assert 'id="job-json"' in job_page and "Copy as JSON" in job_page
    copied = job_page.split('id="job-json" type="application/json">', 1)[1].split("</script>")[0]
    assert json.loads(copied)["data"] == masked_data()

    download = await client.get(f"/queues/api/queues/pay/jobs/{job_id}/")
    assert download.json()["data"] == masked_data() and leaks(download.content.decode()) == []

    # Saving the shown data would write the marker over the real values.
    form = (await client.get(f"/queues/q/pay/jobs/{job_id}/edit-data/")).content.decode()
    assert "cannot be edited here" in form and "<textarea" not in form

    found = (await client.get(f"/queues/api/find/?id={job_id}")).json()
    assert [match["queue"] for match in found["matches"]] == ["pay"]


async def test_data_cut_by_the_list_cap_is_masked_but_whole_in_the_api(
    redacting: None, client: AsyncClient, peer: Peer
) -> None:
    job_id = add(peer, "big", {**DATA, "blob": "x" * 5000})
    (row,) = (await client.get("/queues/api/queues/big/jobs/?state=waiting")).json()["jobs"]
    # "data.*.token" may enter any top-level field: none of the cut text is kept.
    assert row["data"] == MARKER and "data" in row["truncated"]
    whole = (await client.get(f"/queues/api/queues/big/jobs/{job_id}/")).json()
    assert whole["data"] == {**masked_data(), "blob": "x" * 5000}


async def test_dead_letters_have_the_original_data_masked(
    bullpen_settings: dict[str, Any], client: AsyncClient, peer: Peer
) -> None:
    # Plain keys only: a cut envelope keeps its fields up to its copy of the job's data.
    paths = ["data.password", "data.card.number", "data.github.token"]
    envelope = {
        "queue": "pay",
        "prefix": "bull",
        "jobId": "41",
        "name": "charge",
        "failedReason": "card declined",
        "attemptsMade": 3,
        "stacktrace": "Error: card declined\n" + "    at charge (pay.js:1:1)\n" * 200,
        "opts": {"attempts": 3},
        "data": DATA,
    }
    job_id = add(peer, "dead-letter", envelope)
    with override_settings(BULLPEN={**bullpen_settings, "REDACT": paths}):
        await dead_letter_reads(client, job_id)


async def dead_letter_reads(client: AsyncClient, job_id: str) -> None:
    whole = (await client.get(f"/queues/api/queues/dead-letter/jobs/{job_id}/")).json()
    assert whole["data"]["data"] == masked_data() and whole["data"]["queue"] == "pay"
    # The list cuts the envelope inside its stack trace: the row still says where it came from.
    listed = await client.get("/queues/api/queues/dead-letter/jobs/?state=waiting")
    (row,) = listed.json()["jobs"]
    assert "data" in row["truncated"] and leaks(listed.content.decode()) == []
    page = (await client.get("/queues/q/dead-letter/?state=waiting")).content.decode()
    assert "card declined" in page and leaks(page) == []
    job_page = (await client.get(f"/queues/q/dead-letter/jobs/{job_id}/")).content.decode()
    assert "card declined" in job_page and leaks(job_page) == []


async def test_search_never_matches_a_masked_value(
    redacting: None, client: AsyncClient, peer: Peer
) -> None:
    add(peer, "find", job_id="with-secret")
    add(peer, "find", {"user": "bob", "note": PASSWORD}, job_id="secret-in-the-open")

    async def matches(query: str, render: str = "") -> list[dict[str, Any]]:
        path = f"/queues/api/queues/find/search/?state=waiting&q={quote(query)}{render}"
        lines = await stream(client, path)
        assert lines[-1]["type"] == "progress" and lines[-1]["done"] is True
        return [line for line in lines if line["type"] in ("job", "row")]

    # The password is found only where it is not masked (a field no path names).
    (found,) = await matches(PASSWORD)
    assert found["job"]["id"] == "secret-in-the-open"
    assert await matches(f'data.password = "{PASSWORD}"') == []
    assert await matches(CARD) == [] and await matches(TOKEN) == []
    assert await matches("data.github.token = " + json.dumps(TOKEN)) == []
    # What is not masked is still found, and comes back masked.
    (by_exp,) = await matches('data.card.exp = "12/30"')
    assert by_exp["job"]["data"] == masked_data()
    rows = await matches("ada", "&render=row")
    assert len(rows) == 1 and leaks(json.dumps(rows)) == []


async def test_failure_groups_and_their_example_are_masked(
    redacting: None, client: AsyncClient, peer: Peer
) -> None:
    job_id = add(peer, "doomed", {**DATA, "error": "card declined"})
    await run_peer(peer, "work", "--queue", "doomed", "--count", "1", "--fail")
    body = (await client.get("/queues/api/queues/doomed/failure-groups/")).json()
    (group,) = body["groups"]
    assert group["exampleId"] == job_id and leaks(json.dumps(body)) == []
    fragment = (await client.get("/queues/q/doomed/groups/")).content.decode()
    assert job_id in fragment and leaks(fragment) == []
    example = (await client.get(f"/queues/api/queues/doomed/jobs/{job_id}/")).json()
    assert example["state"] == "failed" and example["failedReason"] == "card declined"
    assert example["data"]["password"] == MARKER


async def test_return_values_are_masked(redacting: None, client: AsyncClient, peer: Peer) -> None:
    job_id = add(peer, "done")
    await run_peer(peer, "work", "--queue", "done", "--count", "1")
    job = (await client.get(f"/queues/api/queues/done/jobs/{job_id}/")).json()
    assert job["returnvalue"] == {"ok": MARKER, "id": job_id}
    assert job["redacted"] == ["data", "returnvalue"]
    (row,) = (await client.get("/queues/api/queues/done/jobs/?state=completed")).json()["jobs"]
    assert row["returnvalue"] == {"ok": MARKER, "id": job_id}


async def test_scheduler_templates_are_masked(
    redacting: None, client: AsyncClient, redis_server: RedisServer
) -> None:
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    queue = Queue("nightly", {"connection": connection})
    try:
        await queue.upsertJobScheduler("sync", {"pattern": "0 2 * * *"}, "sync", DATA, {})
    finally:
        await queue.close()
        await connection.aclose()
    body = (await client.get("/queues/api/queues/nightly/schedulers/")).json()
    (scheduler,) = body["schedulers"]
    assert scheduler["template"]["data"] == masked_data()
    fragment = (await client.get("/queues/q/nightly/schedulers/")).content.decode()
    assert leaks(json.dumps(body)) == [] and leaks(fragment) == []
    # The job the scheduler put in the delayed set holds the data too.
    delayed = (await client.get("/queues/api/queues/nightly/jobs/?state=delayed")).json()
    assert delayed["jobs"][0]["data"] == masked_data()


async def test_nothing_is_masked_without_redact(client: AsyncClient, peer: Peer) -> None:
    job_id = add(peer, "open")
    job = (await client.get(f"/queues/api/queues/open/jobs/{job_id}/")).json()
    assert job["data"] == DATA and "redacted" not in job


@pytest.fixture
async def socket(redacting: None) -> AsyncIterator[WebsocketCommunicator]:
    communicator = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
    connected, _ = await communicator.connect()
    assert connected
    yield communicator
    await communicator.disconnect()
    await channel_groups.stop()


async def test_live_rows_job_updates_and_progress_are_masked(
    socket: WebsocketCommunicator, peer: Peer
) -> None:
    await run_peer(peer, "add", "--queue", "live", "--name", "first", "--data", "{}")
    await socket.send_json_to({"watch": "queue", "queue": "live"})
    await wait_for(socket, lambda m: (counts_of(m, "live") or {}).get("waiting") == 1)
    follower = channel_groups.ensure_started()
    for _ in range(100):
        if any(ref.name == "live" for ref in follower.streams.refs.values()):
            break
        await asyncio.sleep(0.1)
    job_id = await asyncio.to_thread(add, peer, "live")
    row_message, _ = await wait_for(
        socket, lambda m: m["type"] == "rows" and any(r["id"] == job_id for r in m["rows"])
    )
    row = next(r for r in row_message["rows"] if r["id"] == job_id)
    assert MARKER in row["html"] and leaks(json.dumps(row_message)) == []

    await socket.send_json_to({"watch": "job", "queue": "live", "id": job_id})
    await follower_tails_log(job_id)
    worked = asyncio.create_task(
        run_peer(peer, "work", "--queue", "live", "--count", "2", "--progress")
    )
    # The job page's progress box shows the whole value: its "stage" masked.
    progress, seen = await wait_for(
        socket, lambda m: m["type"] == "progress" and m["scope"] == "job", timeout=20
    )
    assert MARKER in json.dumps(progress)
    finished, more = await wait_for(
        socket, lambda m: m["type"] == "job" and m["state"] == "completed", timeout=20
    )
    await worked
    assert MARKER in finished["html"]  # the return value's "ok"
    for message in [*seen, progress, *more, finished]:
        assert leaks(json.dumps(message)) == [] and "working" not in json.dumps(message)


@pytest.fixture
def site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_standalone(
        redis_server.url,
        tmp_path,
        **CREDENTIALS,
        BULLPEN_OPEN_READS="1",
        REDACT_FIELDS="data.password  data.card.number\tdata.*.token",
    )
    yield server
    stop_bullpen(server)


@pytest.mark.browser
async def test_the_job_page_in_chromium_shows_the_marker(
    peer: Peer, site: LiveServer, chromium_path: str
) -> None:
    job_id = add(peer, "shop")
    async with chromium(chromium_path) as browser:
        page = await browser.new_page()
        await page.goto(f"{site.url}/queues/q/shop/jobs/{job_id}/")
        await expect(page.locator("#live-status")).to_have_text("live")
        shown = await page.locator("body").inner_text()
        assert MARKER in shown and "12/30" in shown and leaks(shown) == []
        assert leaks(await page.content()) == []
        await page.goto(f"{site.url}/queues/q/shop/?state=waiting")
        await expect(page.locator(f'tr[data-job-id="{job_id}"]')).to_contain_text(MARKER)
        assert leaks(await page.content()) == []
        await browser.close()
