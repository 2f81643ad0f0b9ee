"""Alert rules, decided in one place for the overview, the API and /metrics (pure logic)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings

from queues.alerts import thresholds as alerts
from queues.alerts.thresholds import Alert, alerts_by_queue
from queues.reads.counts import QueueSummary
from queues.reads.keys import STATES, QueueRef


def summary(name: str, global_concurrency: int | None = None, **counts: int) -> QueueSummary:
    every = dict.fromkeys(STATES, 0)
    every.update({state.replace("_", "-"): count for state, count in counts.items()})
    return QueueSummary(QueueRef("bull", name), every, False, global_concurrency, None, None)


def finished(failed: int) -> dict[str, int]:
    return {"completed": 0, "failed": failed}


@pytest.fixture(autouse=True)
def no_queue_at_its_limit() -> Iterator[None]:
    alerts._at_limit_since.clear()
    yield
    alerts._at_limit_since.clear()


def bullpen(**settings: Any) -> override_settings:
    return override_settings(BULLPEN={"PREFIXES": ["bull"], **settings})


def test_the_default_thresholds() -> None:
    quiet = summary("quiet", waiting=10_000, delayed=50_000)
    loud = summary("loud", waiting=9_000, paused=1_001, delayed=50_001)
    with bullpen():
        firing = alerts_by_queue([quiet, loud], {quiet.ref: finished(100), loud.ref: finished(101)})
    assert firing == {
        quiet.ref: [],
        loud.ref: [
            Alert("waiting", 10_001, 10_000),  # paused jobs (BullMQ 5) wait too
            Alert("failed_last_hour", 101, 100),
            Alert("delayed", 50_001, 50_000),
        ],
    }


def test_settings_change_the_thresholds_for_all_or_one_queue() -> None:
    mail, shop = summary("mail", waiting=3, delayed=3), summary("shop", waiting=3, delayed=3)
    options = {"shop": {"alerts": {"waiting": 5, "delayed": 1}}}
    with bullpen(ALERTS={"waiting": 2, "delayed": None}, QUEUE_OPTIONS=options):
        firing = alerts_by_queue([mail, shop], {})
    assert firing[mail.ref] == [Alert("waiting", 3, 2)]  # delayed turned off for all
    assert firing[shop.ref] == [Alert("delayed", 3, 1)]  # and back on, and waiting raised


def test_a_queue_missing_from_the_finished_counts_failed_none() -> None:
    with bullpen(ALERTS={"failed_last_hour": 0}):
        assert alerts_by_queue([summary("new")], {}) == {QueueRef("bull", "new"): []}


def test_the_dead_letter_queue_has_no_waiting_alert_unless_asked() -> None:
    dead = summary("dead-letter", waiting=5)
    with bullpen(ALERTS={"waiting": 1}):
        assert alerts_by_queue([dead], {})[dead.ref] == []
    with bullpen(QUEUE_OPTIONS={"dead-letter": {"alerts": {"waiting": 1}}}):
        assert alerts_by_queue([dead], {})[dead.ref] == [Alert("waiting", 5, 1)]


def test_active_at_the_limit_alerts_only_after_the_threshold() -> None:
    busy = summary("busy", global_concurrency=4, active=4)
    with bullpen():
        assert alerts_by_queue([busy], {})[busy.ref] == []  # at the limit from now on
        alerts._at_limit_since[busy.ref] = time.monotonic() - 301
        (alert,) = alerts_by_queue([busy], {})[busy.ref]
        assert (alert.rule, alert.threshold) == ("active_at_limit_seconds", 300)
        assert alert.value >= 301
        below = summary("busy", global_concurrency=4, active=3)
        assert alerts_by_queue([below], {})[busy.ref] == []
        assert busy.ref not in alerts._at_limit_since  # the clock starts again next time


def test_new_failure_signatures_fire_above_their_threshold() -> None:
    mail, shop = summary("mail"), summary("shop")
    new = {mail.ref: [f"error {n}" for n in range(7)], shop.ref: []}
    with bullpen():
        firing = alerts_by_queue([mail, shop], {}, new)
    (alert,) = firing[mail.ref]
    assert (alert.rule, alert.value, alert.threshold) == ("new_failure_signatures", 7, 0)
    assert alert.signatures == tuple(f"error {n}" for n in range(alerts.SIGNATURES_SHOWN))
    assert alert.as_json()["signatures"][0] == "error 0"
    assert firing[shop.ref] == []
    with bullpen(QUEUE_OPTIONS={"mail": {"alerts": {"new_failure_signatures": None}}}):
        assert alerts_by_queue([mail], {}, new)[mail.ref] == []
    with bullpen(ALERTS={"new_failure_signatures": 7}):
        assert alerts_by_queue([mail], {}, new)[mail.ref] == []


def test_delivery_settings_are_no_thresholds() -> None:
    delivery = {"EMAIL_TO": ["ops@example.com"], "COOLDOWN": 1, "INTERVAL": 1, "LINK_BASE": ""}
    with bullpen(ALERTS={"waiting": 1, **delivery}):
        assert set(alerts.thresholds("mail")) == set(alerts.DEFAULTS)
        assert alerts_by_queue([summary("mail", waiting=2)], {})[QueueRef("bull", "mail")] == [
            Alert("waiting", 2, 1)
        ]
