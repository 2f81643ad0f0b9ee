"""The alert rules read from history, workers and schedulers, on real Node BullMQ jobs: each
fires and resolves, told to a local webhook receiver and by e-mail (Django's outbox), with the
value, the threshold, the window and the link; a queue whose history was never recorded decides
nothing."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from asgiref.sync import sync_to_async
from bullmq import Queue
from django.core import mail
from django.db import close_old_connections
from django.test import override_settings

from dashboard.alerts.delivery import deliver
from dashboard.audit import writer
from dashboard.models import AuditEntry
from queues.alerts.state import Notice
from queues.alerts.watch import AlertWatch, DeliverySettings
from queues.history.recorder import HistoryRecorder
from queues.reads.keys import QueueRef
from tests.history.history_support import feed_events, flush_closed
from tests.support.live_reads import found_within
from tests.support.peer import Peer
from tests.support.servers.redis_server import RedisServer
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db(transaction=True)

IMG = QueueRef("bull", "img")
BASE = "https://ops.example.com"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    """A webhook receiver; at the end, every notice sent to it is audited (no delivery is
    left writing to the database when the test ends)."""
    found = Receiver().start()
    yield found
    deadline = asyncio.get_running_loop().time() + 15
    while await audited() < len(found.bodies):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    found.stop()


async def audited() -> int:
    """Alert rows written so far, counted between two rows' writes: SQLite in memory refuses
    a read while a row is written, and the write of a row while a read holds the table (the
    notice's row is then lost, and its delivery logged as failed)."""
    return await sync_to_async(_audited, thread_sensitive=False)()


def _audited() -> int:
    with writer._alert_rows:  # the lock the writer holds through each row's write
        close_old_connections()  # a thread of its own, as the writer's
        try:
            return AuditEntry.objects.filter(action="alert").count()
        finally:
            close_old_connections()


def told(receiver: Receiver) -> list[tuple[str, str, str]]:
    return [(b["status"], b["queue"], b["rule"]) for b in receiver.bodies]


def alerting(bullpen_settings: dict[str, Any], receiver: Receiver, **rules: Any) -> dict[str, Any]:
    alerts = {
        "WEBHOOKS": [f"{receiver.url}/hook"],
        "EMAIL_TO": ["oncall@example.com"],
        "COOLDOWN": 0,
        "LINK_BASE": BASE,
        **rules,
    }
    return {**bullpen_settings, "ALERTS": alerts}


async def record(redis_client: Any) -> None:
    """What the live reader records, from the events the Node workers wrote."""
    recorder = HistoryRecorder()
    feed_events(recorder, redis_client, IMG)
    await flush_closed(recorder, [])


async def passes(watch: AlertWatch, count: int = 1) -> list[Notice]:
    notices: list[Notice] = []
    for _ in range(count):
        notices += await watch.evaluate(DeliverySettings.from_config())
    return notices


async def test_rate_and_percentile_rules_fire_on_history_and_resolve(
    peer: Peer, receiver: Receiver, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    def run(count: int, *flags: str) -> None:
        peer("add-bulk", "--queue", "img", "--name", "resize", "--count", str(count))
        peer("work", "--queue", "img", "--count", str(count), *flags)

    await asyncio.to_thread(run, 10, "--fail")
    await asyncio.to_thread(run, 20, "--delay-ms", "40")
    # "shop" has jobs but no history: its rules decide nothing.
    await asyncio.to_thread(peer, "add-bulk", "--queue", "shop", "--name", "s", "--count", "3")
    await record(redis_client)
    rules = {
        "failure_rate_percent": 20,
        "run_p95_ms": 30,
        "wait_p95_ms": 1,
        "stalled_last_hour": 5,  # none stalled: it stays quiet
        "new_failure_signatures": None,
        "RATE_WINDOW": 600,
    }
    watch = AlertWatch(deliver, lambda: True)
    with override_settings(BULLPEN=alerting(bullpen_settings, receiver, **rules)):
        notices = await passes(watch)
        await found_within(lambda: len(receiver.bodies) == 3 and len(mail.outbox) == 3)
    assert sorted(told(receiver)) == [
        ("firing", "img", "failure_rate_percent"),
        ("firing", "img", "run_p95_ms"),
        ("firing", "img", "wait_p95_ms"),
    ]
    assert {n.queue for n in notices} == {"img"}
    rate = next(b for b in receiver.bodies if b["rule"] == "failure_rate_percent")
    assert (rate["value"], rate["threshold"], rate["windowSeconds"]) == (33.3, 20, 600)
    assert rate["link"] == f"{BASE}/queues/q/img/"
    assert rate["text"].startswith("Alert on img: 33.3 % of jobs failed in the last 10 min")
    slow = next(b for b in receiver.bodies if b["rule"] == "run_p95_ms")
    assert 40 <= slow["value"] < 1000 and slow["threshold"] == 30
    subjects = sorted(m.subject for m in mail.outbox)
    assert subjects[0] == (
        "[Bullpen] Alert on img: 33.3 % of jobs failed in the last 10 min, more than 20 %"
    )
    assert all("Window: 600 s" in m.body and f"{BASE}/queues/q/img/" in m.body for m in mail.outbox)

    # Fewer finished jobs than the rate needs, and thresholds raised above the values: each is
    # back within its rule, and told so once.
    calmer = {
        **rules,
        "RATE_MIN_JOBS": 100,
        "run_p95_ms": 3_600_000,
        "wait_p95_ms": 3_600_000,
    }
    with override_settings(BULLPEN=alerting(bullpen_settings, receiver, **calmer)):
        await passes(watch, 2)
        await found_within(lambda: len(receiver.bodies) == 6 and len(mail.outbox) == 6)
    assert sorted(told(receiver)[3:]) == [
        ("resolved", "img", "failure_rate_percent"),
        ("resolved", "img", "run_p95_ms"),
        ("resolved", "img", "wait_p95_ms"),
    ]
    assert "[Bullpen] Resolved on img: wait_p95_ms is back within its threshold" in {
        m.subject for m in mail.outbox
    }


async def test_waiting_worker_and_scheduler_rules_fire_and_resolve(
    peer: Peer, receiver: Receiver, redis_server: RedisServer, bullpen_settings: dict[str, Any]
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "2")
    connection = aioredis.Redis.from_url(redis_server.url, decode_responses=True)
    queue = Queue("nightly", {"connection": connection})
    try:  # due at once, and no worker takes it
        await queue.upsertJobScheduler("report", {"every": 3_600_000}, "report", {}, {})
    finally:
        await queue.close()
        await connection.aclose()
    config = alerting(bullpen_settings, receiver)
    config["QUEUE_OPTIONS"] = {
        "mail": {"alerts": {"oldest_waiting_seconds": 0, "no_workers_seconds": 0}},
        "nightly": {"alerts": {"scheduler_overdue_seconds": 0}},
    }
    watch = AlertWatch(deliver, lambda: True)
    expected = {
        ("firing", "mail", "oldest_waiting_seconds"),
        ("firing", "mail", "no_workers_seconds"),
        ("firing", "nightly", "scheduler_overdue_seconds"),
    }
    with override_settings(BULLPEN=config):
        fired: set[tuple[str, str, str]] = set()
        for _ in range(100):  # each rule fires once its value is past 0 s: a pass or two
            fired |= {(n.status, n.queue, n.alert.rule) for n in await passes(watch)}
            if fired >= expected:
                break
            await asyncio.sleep(0.05)
        assert fired == expected
        await found_within(lambda: set(told(receiver)) == expected and len(mail.outbox) == 3)
        overdue = next(b for b in receiver.bodies if b["rule"] == "scheduler_overdue_seconds")
        assert overdue["link"] == f"{BASE}/queues/q/nightly/" and overdue["threshold"] == 0

        await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "2")
        await asyncio.to_thread(peer, "work", "--queue", "nightly", "--count", "1")
        await passes(watch)
        await found_within(lambda: len(receiver.bodies) == 6 and len(mail.outbox) == 6)
    assert set(told(receiver)[3:]) == {
        ("resolved", "mail", "oldest_waiting_seconds"),
        ("resolved", "mail", "no_workers_seconds"),
        ("resolved", "nightly", "scheduler_overdue_seconds"),
    }


async def test_stalled_jobs_fire_the_stall_rule(
    peer: Peer, receiver: Receiver, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "img", "--name", "n", "--count", "3")
    # A worker stops holding three jobs; another's stall check takes them back and runs them.
    found = await asyncio.to_thread(peer, "stall", "--queue", "img", "--count", "3")
    assert found == {"stalled": 3, "completed": 3}
    await record(redis_client)
    watch = AlertWatch(deliver, lambda: True)
    with override_settings(BULLPEN=alerting(bullpen_settings, receiver, stalled_last_hour=2)):
        assert len(await passes(watch)) == 1
        await found_within(lambda: len(receiver.bodies) == 1 and len(mail.outbox) == 1)
    body = receiver.bodies[0]
    assert (body["rule"], body["value"], body["threshold"], body["windowSeconds"]) == (
        "stalled_last_hour",
        3,
        2,
        3600,
    )
    assert mail.outbox[0].subject == (
        "[Bullpen] Alert on img: 3 jobs stalled in the last 60 min, more than 2"
    )
    with override_settings(BULLPEN=alerting(bullpen_settings, receiver, stalled_last_hour=3)):
        await passes(watch)
        await found_within(lambda: len(receiver.bodies) == 2)
    assert told(receiver)[1] == ("resolved", "img", "stalled_last_hour")


async def test_a_rule_still_firing_is_told_again_every_renotify(
    peer: Peer, receiver: Receiver, bullpen_settings: dict[str, Any]
) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "mail", "--name", "m", "--count", "2")
    config = alerting(bullpen_settings, receiver, oldest_waiting_seconds=0, RENOTIFY=0.5)
    watch = AlertWatch(deliver, lambda: True)
    with override_settings(BULLPEN=config):
        # Wall-clock before and after each pass that told: the sender's own time of telling
        # (taken within the pass, after reads that a loaded machine slows) lies between them.
        told_within: list[tuple[float, float]] = []
        while len(told_within) < 3:
            before = time.time()
            if await passes(watch):
                told_within.append((before, time.time()))
            await asyncio.sleep(0.05)
        await found_within(lambda: len(receiver.bodies) == 3 and len(mail.outbox) == 3)
        # A renotify is at least 0.5 s after the one before: from the earlier pass's start to
        # the later one's end is then at least that long, however long each pass took.
        assert all(
            later[1] - earlier[0] >= 0.5 for earlier, later in itertools.pairwise(told_within)
        )
        await asyncio.to_thread(peer, "work", "--queue", "mail", "--count", "2")
        await passes(watch)
        await found_within(lambda: len(receiver.bodies) == 4)
    assert told(receiver) == [("firing", "mail", "oldest_waiting_seconds")] * 3 + [
        ("resolved", "mail", "oldest_waiting_seconds")
    ]
