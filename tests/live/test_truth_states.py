"""The state tabs tell the truth: when delayed jobs run and in BullMQ's order, prioritized jobs'
priority, completed jobs that failed earlier attempts, and readable dead letters."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from django.test import AsyncClient, override_settings
from django.test.html import Element

from queues.runner import Producer, QueueOptions, Registry
from tests.support.markup import assert_in_html, attribute, element, elements, text
from tests.support.peer import Peer
from tests.support.worker_fixtures import Runners, wait_for

HOUR = 3_600_000


def job_list(html: str) -> Element:
    return element(html, "div", id="job-list")  # the list, not the search results' table


def row_ids(html: str) -> list[str]:
    return [
        str(attribute(row, "data-job-id"))
        for row in elements(job_list(html), "tr", data_job_id=None)
    ]


def row_of(html: str, job_id: str) -> Element:
    return element(job_list(html), "tr", data_job_id=job_id)


def head_and_first_row(html: str) -> tuple[int, int]:
    listed = job_list(html)
    first_row = elements(element(listed, "tbody"), "tr")[0]
    return len(elements(element(listed, "thead"), "th")), len(elements(first_row, "td"))


def order_links(html: str, order: str) -> list[str]:
    """The words of the links that order the list ``order`` (asc or desc)."""
    return [
        text(a)
        for a in elements(job_list(html), "a", href=None)
        if str(attribute(a, "href")).endswith(f"order={order}")
    ]


def shows_a_time(node: Element) -> bool:
    """A <time> with the milliseconds the page's script makes local."""
    return any(str(attribute(t, "data-ms")).isdigit() for t in elements(node, "time", data_ms=None))


async def api(client: AsyncClient, path: str) -> Any:
    response = await client.get(f"/queues/api/{path}")
    assert response.status_code == 200, response.content[:500]
    return response.json()


# ---- delayed and prioritized --------------------------------------------------------------


async def test_delayed_jobs_run_in_node_s_order_both_ways(client: AsyncClient, peer: Peer) -> None:
    # Two jobs share a delay: BullMQ orders them by its counter in the score's low bits.
    delays = [30 * 60_000, 5 * 60_000, 2 * HOUR, 59 * 60_000, 5 * 60_000, 10_000]
    added = [
        await asyncio.to_thread(
            peer,
            "add",
            "--queue",
            "later",
            "--name",
            f"remind-{index}",
            "--data",
            "{}",
            "--opts",
            json.dumps({"delay": delay}),
        )
        for index, delay in enumerate(delays)
    ]
    soonest = [added[i]["id"] for i in (5, 1, 4, 0, 3, 2)]
    for order, asc in (("desc", []), ("asc", ["--asc"])):
        node = (await asyncio.to_thread(peer, "inspect", "--queue", "later", *asc))["jobs"]
        body = await api(client, f"queues/later/jobs/?state=delayed&per_page=300&order={order}")
        ours = [job["id"] for job in body["jobs"]]
        assert ours == node["delayed"], order
        assert ours == (soonest if order == "asc" else soonest[::-1])
        html = (await client.get(f"/queues/q/later/?state=delayed&order={order}")).content.decode()
        assert row_ids(html) == ours
        # Added with a delay, a job runs at timestamp + delay; the score says the same.
        for job in body["jobs"]:
            assert job["dueAt"] == job["timestamp"] + job["delay"]
        due = [job["dueAt"] for job in body["jobs"]]
        assert due == sorted(due, reverse=order == "desc")
    # The order links say what BullMQ's orders are.
    html = (await client.get("/queues/q/later/?state=delayed")).content.decode()
    assert "latest due first" in order_links(html, "desc")
    assert "soonest due first" in order_links(html, "asc")
    th, td = head_and_first_row(html)
    assert th == td and ">Runs</th>" in html
    row = row_of(html, added[3]["id"])  # due in 59 minutes
    due_cell = element(row, "td", data_field="dueAt")
    assert shows_a_time(due_cell)
    assert text(element(due_cell, "span", class_="rel")) in ("in 58 min", "in 59 min")


async def test_a_retry_runs_after_its_backoff_not_at_timestamp_plus_delay(
    client: AsyncClient, peer: Peer
) -> None:
    two_days = 48 * HOUR
    retry = await asyncio.to_thread(
        peer,
        "retry-later",
        "--queue",
        "later",
        "--name",
        "charge",
        "--backoff-ms",
        str(HOUR),
        "--added-ms-ago",
        str(two_days),
    )
    await asyncio.to_thread(
        peer,
        "add",
        "--queue",
        "later",
        "--name",
        "soon",
        "--data",
        "{}",
        "--opts",
        '{"delay": 1800000}',
    )
    assert retry["delay"] == HOUR
    body = await api(client, "queues/later/jobs/?state=delayed&order=asc")
    node = (await asyncio.to_thread(peer, "inspect", "--queue", "later", "--asc"))["jobs"]
    assert [job["id"] for job in body["jobs"]] == node["delayed"]
    # Node runs the job due in 30 min first: "timestamp + delay" would put the retry first.
    assert node["delayed"][-1] == retry["id"]
    row = next(job for job in body["jobs"] if job["id"] == retry["id"])
    assert abs(row["dueAt"] - (retry["failedAt"] + HOUR)) < 2000
    assert row["dueAt"] - (row["timestamp"] + row["delay"]) > two_days - 60_000
    detail = await api(client, f"queues/later/jobs/{retry['id']}/")
    assert detail["dueAt"] == row["dueAt"]
    page = (await client.get(f"/queues/q/later/jobs/{retry['id']}/")).content.decode()
    runs = page[page.index('data-field="dueAt"') :].split("</dd>")[0]
    assert f'data-ms="{row["dueAt"]}"' in runs and "in 59 min" in runs


async def test_prioritized_tab_shows_priority_in_node_s_order(
    client: AsyncClient, peer: Peer
) -> None:
    for index, priority in enumerate((10, 1, 5, 1, 200)):
        await asyncio.to_thread(
            peer,
            "add",
            "--queue",
            "images",
            "--name",
            f"resize-{index}",
            "--data",
            "{}",
            "--opts",
            json.dumps({"priority": priority}),
        )
    for order, asc in (("desc", []), ("asc", ["--asc"])):
        node = (await asyncio.to_thread(peer, "inspect", "--queue", "images", *asc))["jobs"]
        html = (await client.get(f"/queues/q/images/?state=prioritized&order={order}")).content
        page = html.decode()
        assert row_ids(page) == node["prioritized"], order
        shown = [
            int(text(element(row_of(page, job_id), "td", data_field="priority")))
            for job_id in row_ids(page)
        ]
        assert shown == sorted(shown, reverse=order == "desc")
        assert shown[0 if order == "asc" else -1] == 1
        th, td = head_and_first_row(page)
        assert th == td and ">Priority</th>" in page
    assert "highest priority first" in order_links(page, "asc")
    assert "lowest priority first" in order_links(page, "desc")
    # Other tabs keep their columns, and head and rows still agree.
    waiting = (await client.get("/queues/q/images/?state=waiting")).content.decode()
    assert ">Priority</th>" not in waiting and ">Runs</th>" not in waiting


# ---- completed after failed attempts -------------------------------------------------------


async def test_completed_after_failed_attempts_is_not_shown_as_failed(
    client: AsyncClient, peer: Peer
) -> None:
    job = await asyncio.to_thread(
        peer,
        "add",
        "--queue",
        "mail",
        "--name",
        "send",
        "--data",
        "{}",
        "--opts",
        '{"attempts": 5}',
    )
    plain = await asyncio.to_thread(
        peer, "add", "--queue", "mail", "--name", "send", "--data", "{}"
    )
    done = await asyncio.to_thread(
        peer, "work", "--queue", "mail", "--count", "2", "--fail-attempts", "1"
    )
    assert done["completed"] == 1 and done["failed"] == 1  # the plain job had one attempt
    detail = await api(client, f"queues/mail/jobs/{job['id']}/")
    assert detail["state"] == "completed" and detail["attemptsMade"] == 2
    assert detail["failedReason"] == f"attempt 1 of job {job['id']} failed on purpose"
    assert len(detail["stacktrace"]) == 1

    html = (await client.get("/queues/q/mail/?state=completed")).content.decode()
    row = row_of(html, job["id"])
    assert "succeeded on attempt 2 of 5" in text(row)
    assert not elements(row, "div", class_="reason")
    assert_in_html("<summary>Earlier attempts failed</summary>", row)
    assert "failed on purpose" in text(row)

    page = (await client.get(f"/queues/q/mail/jobs/{job['id']}/")).content.decode()
    failure = page[
        page.index('id="job-failure"') : page.index("</section>", page.index('id="job-failure"'))
    ]
    assert 'class="failure earlier"' in page and "This job succeeded on attempt 2 of 5." in failure
    assert '<p class="reason">' not in failure and "<h2>Failure</h2>" not in failure
    earlier = failure[failure.index("Earlier attempts failed") :]
    assert "failed on purpose" in earlier and "Stack trace (attempt 1)" in earlier
    assert " open" not in failure.split("Earlier attempts failed")[0].split("<details")[-1]
    facts = page[page.index('data-field="failedReason"') :].split("</dd>")[0]
    assert "none: succeeded on attempt 2 of 5" in facts and "failed on purpose" not in facts

    # A job that failed for good still shows its failure as one.
    failed = (await client.get(f"/queues/q/mail/jobs/{plain['id']}/")).content.decode()
    assert '<p class="reason">attempt 1 of job' in failed and "succeeded on" not in failed


# ---- dead letters -------------------------------------------------------------------------


def _failing_registry() -> Registry:
    registry = Registry()

    async def deliver(payload: Any, ctx: Any) -> str:
        raise RuntimeError(f"endpoint <b>down</b> for {payload.get('url')}")

    registry.register("hooks", deliver, QueueOptions(attempts=2, backoff_ms=5))
    return registry


async def _dead_letter(runners: Runners, redis_client: Any, data: dict[str, Any]) -> str:
    registry = _failing_registry()
    async with Producer(registry) as producer:
        job_id = await producer.add("hooks", "post", data, job_id="hook-1")
    runner = await runners.start(registry)

    async def dead() -> bool:
        return bool(redis_client.exists("bull:dead-letter:hooks.hook-1"))

    await wait_for("the dead letter", dead)
    await runners.stop(runner)
    return job_id


async def test_a_dead_letter_reads_as_one(
    client: AsyncClient, runners: Runners, redis_client: Any
) -> None:
    # Bigger than a list row's data cap: the row still finds the reason.
    job_id = await _dead_letter(
        runners, redis_client, {"url": "https://a.example", "blob": "z" * 10_000}
    )
    html = (await client.get("/queues/q/dead-letter/?state=waiting")).content.decode()
    row = row_of(html, "hooks.hook-1")
    assert "cut ·" in text(row)  # the data was cut for the list
    assert_in_html(
        '<div class="reason">endpoint &lt;b&gt;down&lt;/b&gt; for https://a.example</div>', row
    )
    assert "from hooks /" in text(row) and not elements(row, "b")

    page = (await client.get("/queues/q/dead-letter/jobs/hooks.hook-1/")).content.decode()
    section = page[
        page.index('data-testid="dead-letter"') : page.index(
            "</section>", page.index('data-testid="dead-letter"')
        )
    ]
    assert '<a href="/queues/q/hooks/">hooks</a>' in section
    assert f'href="/queues/q/hooks/jobs/{job_id}/">{job_id}</a>' in section
    assert "endpoint &lt;b&gt;down&lt;/b&gt;" in section and "<b>" not in section
    assert "<dd>2 of 2</dd>" in section
    stack = section[section.index('data-testid="dead-letter-stack">') :].split("</pre>")[0]
    assert "Traceback (most recent call last):" in stack and "\n" in stack
    assert "RuntimeError: endpoint &lt;b&gt;down" in stack
    assert shows_a_time(element(page, "dd", data_testid="failed-at"))
    # The raw data stays below the section.
    assert page.index('data-testid="dead-letter"') < page.index('data-testid="data"')

    # The original removed since: said so, and not linked.
    redis_client.delete("bull:hooks:hook-1")
    redis_client.zrem("bull:hooks:failed", "hook-1")
    page = (await client.get("/queues/q/dead-letter/jobs/hooks.hook-1/")).content.decode()
    original = page[page.index('data-testid="original-job"') :].split("</dd>")[0]
    assert "removed from hooks since" in original and "href" not in original


async def test_a_node_written_dead_letter_and_hostile_fields(
    client: AsyncClient, peer: Peer
) -> None:
    envelope = {
        "queue": "gone-queue",
        "prefix": "bull",
        "jobId": "7",
        "name": "<img src=x onerror=alert(1)>",
        "data": {"n": 1},
        "opts": {"attempts": 3},
        "failedReason": "<script>alert('reason')</script>" + "r" * 300,
        "stacktrace": "Error: <script>\n    at a (x.js:1:1)\n    at b (y.js:2:2)",
        "attemptsMade": 3,
        "failedAt": int(time.time() * 1000) - 60_000,
        "worker": "<i>w-1</i>",
    }
    added = await asyncio.to_thread(
        peer, "add", "--queue", "dead-letter", "--name", "x", "--data", json.dumps(envelope)
    )
    html = (await client.get("/queues/q/dead-letter/?state=waiting")).content.decode()
    row = row_of(html, added["id"])
    reason = text(element(row, "div", class_="reason"))
    # Shown as text, not markup, and cut to 200 characters.
    assert reason.startswith("<script>alert('reason')</script>rrr") and len(reason) == 200
    assert not elements(row, "script")
    page = (await client.get(f"/queues/q/dead-letter/jobs/{added['id']}/")).content.decode()
    for raw in ("<script>", "<i>w-1</i>", "<img src=x"):
        assert raw not in page
    section = page[page.index('data-testid="dead-letter"') :].split("</section>")[0]
    assert 'gone-queue <span class="muted">(no longer exists)</span>' in section
    assert "not readable here" in section and "<dd>3 of 3</dd>" in section
    assert "Error: &lt;script&gt;\n    at a (x.js:1:1)\n    at b" in section


async def test_the_dead_letter_queue_is_not_alarmed_for_having_no_worker(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    for queue in ("dead-letter", "busy"):
        for index in range(2):
            await asyncio.to_thread(
                peer, "add", "--queue", queue, "--name", f"n{index}", "--data", "{}"
            )
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": {"waiting": 1}}):
        alerts = (await client.get("/queues/api/alerts/")).json()["alerts"]
        assert alerts["busy"] == [{"rule": "waiting", "value": 2, "threshold": 1}]
        assert alerts["dead-letter"] == []
        overview = (await client.get("/queues/")).content.decode()
        dead_row = overview[overview.index('data-queue="dead-letter"') :].split("</tr>")[0]
        assert "alerting" not in dead_row and 'data-rule="waiting"' in overview
    options = {"dead-letter": {"alerts": {"waiting": 1}}}
    with override_settings(BULLPEN={**bullpen_settings, "QUEUE_OPTIONS": options}):
        alerts = (await client.get("/queues/api/alerts/")).json()["alerts"]
        assert [a["rule"] for a in alerts["dead-letter"]] == ["waiting"]  # asked for, kept
    dead = (await client.get("/queues/q/dead-letter/workers/")).content.decode()
    assert "no worker consumes it, by design" in dead and 'data-testid="no-workers"' not in dead
    busy = (await client.get("/queues/q/busy/workers/")).content.decode()
    assert 'data-testid="no-workers"' in busy and "by design" not in busy
