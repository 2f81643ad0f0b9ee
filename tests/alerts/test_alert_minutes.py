"""The alert rules keep each queue's closed minutes between passes (queues/alerts/minutes.py):
a minute found is read once and reused, a minute written after is read, a queue whose
``...:last`` moved back and a process that takes the lease over read everything again. The
minutes are written in the recorder's own format, on a queue of real Node BullMQ jobs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from queues.alerts import decided, minutes
from queues.alerts.rules import read_rules
from queues.alerts.state import Notice
from queues.alerts.thresholds import COUNTED
from queues.alerts.watch import AlertWatch, DeliverySettings
from queues.history.record import NameRecord, dumps_span
from queues.history.storage import (
    MINUTE_MS,
    MINUTE_SKETCH_TTL_S,
    MINUTE_TTL_S,
    last_key,
    span_key,
    summary_key,
)
from queues.history.summary import dumps_summary
from queues.reads.counts import summaries
from queues.reads.keys import QueueRef
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

IMG = QueueRef("bull", "img")
RULES = {
    "failure_rate_percent": 40,
    "stalled_last_hour": 4,
    "new_failure_signatures": None,
    "RATE_WINDOW": 600,
    "RATE_MIN_JOBS": 1,
    "COOLDOWN": 0,
    "WEBHOOKS": ["http://127.0.0.1:9/nowhere"],
}


@pytest.fixture(autouse=True)
def nothing_kept() -> Iterator[None]:
    minutes.forget()
    decided.forget()
    yield
    minutes.forget()
    decided.forget()


def write_minute(
    redis_client: Any, start: int, completed: int, failed: int, stalled: int = 0
) -> None:
    """A closed minute as the recorder writes it: its sketches, its summary, ``...:last``."""
    record = NameRecord(completed=completed, failed=failed, stalled=stalled)
    for run in range(completed + failed):
        record.run.add(10.0 + run)
    span = {"resize": record}
    pipe = redis_client.pipeline(transaction=False)
    pipe.set(span_key(IMG, "m", start), dumps_span(span), nx=True, ex=MINUTE_SKETCH_TTL_S)
    pipe.set(summary_key(IMG, "m", start), dumps_summary(span), nx=True, ex=MINUTE_TTL_S)
    pipe.set(last_key(IMG), start, ex=MINUTE_TTL_S)
    pipe.execute()


def drop_minute(redis_client: Any, start: int) -> None:
    redis_client.delete(span_key(IMG, "m", start), summary_key(IMG, "m", start))


async def rule_values(now_ms: int) -> dict[str, float]:
    found = await summaries(states=COUNTED)
    reading = await read_rules(found, now_ms, workers=False)
    assert not reading.undecided
    return {alert.rule: alert.value for alert in reading.alerts.get(IMG, [])}


@pytest.fixture
async def img(peer: Peer) -> None:
    await asyncio.to_thread(peer, "add-bulk", "--queue", "img", "--name", "resize", "--count", "2")


async def test_a_closed_minute_is_read_once_and_a_minute_written_after_is_read(
    img: None, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    now = int(time.time() * 1000)
    minute = now - now % MINUTE_MS
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": RULES}):
        write_minute(redis_client, minute - 3 * MINUTE_MS, 0, 10, stalled=3)
        # An hour's minute before the window: only its stalls count (from its summary).
        write_minute(redis_client, minute - 30 * MINUTE_MS, 5, 0, stalled=1)
        redis_client.set(last_key(IMG), minute - 3 * MINUTE_MS)
        assert await rule_values(now + 1000) == {"failure_rate_percent": 100.0}
        assert len(minutes.KEPT) == 1

        # Both minutes gone from Redis: a pass that read them again would find nothing. The
        # next minute written (and ``...:last`` moved with it) is read, the closed ones kept.
        drop_minute(redis_client, minute - 3 * MINUTE_MS)
        drop_minute(redis_client, minute - 30 * MINUTE_MS)
        write_minute(redis_client, minute - 2 * MINUTE_MS, 10, 0, stalled=1)
        assert await rule_values(now + MINUTE_MS) == {
            "failure_rate_percent": 50.0,
            "stalled_last_hour": 5,
        }
        # The open minute, not written at the pass before, is read once it is.
        write_minute(redis_client, minute + MINUTE_MS, 0, 20)
        assert await rule_values(now + 2 * MINUTE_MS) == {
            "failure_rate_percent": 75.0,
            "stalled_last_hour": 5,
        }

        # ``...:last`` moved back (history written again): everything is read again, and the
        # two minutes gone count no more.
        redis_client.set(last_key(IMG), minute - 2 * MINUTE_MS)
        assert await rule_values(now + 3 * MINUTE_MS) == {"failure_rate_percent": 66.7}


async def test_the_same_decisions_read_cold_and_from_kept_minutes(
    img: None, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    now = int(time.time() * 1000)
    minute = now - now % MINUTE_MS
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": RULES}):
        for back in range(70, 0, -1):
            write_minute(redis_client, minute - back * MINUTE_MS, back % 7, back % 3, back % 2)
        for later in range(6):  # a pass a minute, and one cold beside each
            at = now + later * MINUTE_MS
            write_minute(redis_client, minute + (later - 1) * MINUTE_MS, 1, later, 1)
            kept = await rule_values(at)
            decided.forget()
            saved = minutes.KEPT
            minutes.KEPT = minutes.KeptMinutes()
            try:
                assert await rule_values(at) == kept
            finally:
                minutes.KEPT = saved
            assert kept  # the rules fire: the values compared are there
        assert len(minutes.KEPT) == 1


async def nowhere(notice: Notice, targets: frozenset[str], later: bool) -> frozenset[str]:
    return frozenset()


async def test_a_process_that_takes_the_lease_over_keeps_nothing_from_before(
    img: None, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    now = int(time.time() * 1000)
    minute = now - now % MINUTE_MS
    holds = [True]
    watch = AlertWatch(nowhere, lambda: holds[0])
    with override_settings(BULLPEN={**bullpen_settings, "ALERTS": RULES}):
        settings = DeliverySettings.from_config()
        write_minute(redis_client, minute - 3 * MINUTE_MS, 0, 10)
        fired = await watch.evaluate(settings)
        assert [(n.status, n.alert.rule) for n in fired] == [("firing", "failure_rate_percent")]
        # The failed minute gone from Redis and a quiet one written: kept, it still fires.
        drop_minute(redis_client, minute - 3 * MINUTE_MS)
        write_minute(redis_client, minute - 2 * MINUTE_MS, 12, 0)
        assert await watch.evaluate(settings) == []
        assert len(minutes.KEPT) == 1
        # Another process held the lease meanwhile: taken back, everything is read again.
        holds[0] = False
        assert await watch.evaluate(settings) == []
        holds[0] = True
        resolved = await watch.evaluate(settings)
        assert [(n.status, n.alert.rule) for n in resolved] == [
            ("resolved", "failure_rate_percent")
        ]
