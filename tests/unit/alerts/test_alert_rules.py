"""The rules read from history, workers and schedulers: the values they measure, how their
window is read, and an undecided rule keeping its state (pure logic)."""

from __future__ import annotations

from collections.abc import Sequence

from django.test import override_settings

from dashboard.alerts import messages
from queues.alerts.names import HISTORY_RULES
from queues.alerts.rules import Measure, RuleReading, _judge, _Wanted, minute_starts, window_values
from queues.alerts.state import FIRING, RESOLVED, AlertTracker, Notice
from queues.alerts.thresholds import Alert, thresholds
from queues.history.packed import PackedRecord, loads_total
from queues.history.record import NameRecord, dumps_span
from queues.history.storage import MINUTE_MS
from queues.reads.keys import QueueRef

NOW = 28_333_333 * MINUTE_MS + 30_000  # half a minute into a minute


def record(completed: int, failed: int, runs: Sequence[float] = (), stalled: int = 0) -> NameRecord:
    found = NameRecord(completed=completed, failed=failed, stalled=stalled)
    for run in runs:
        found.run.add(run)
        found.wait.add(run / 10)
    return found


def test_the_rate_needs_enough_finished_jobs() -> None:
    measure = Measure(window_s=900, min_jobs=20)
    assert window_values(record(15, 4), measure)["failure_rate_percent"] is None
    assert window_values(record(16, 4), measure)["failure_rate_percent"] == 20.0
    assert window_values(record(0, 0), Measure(min_jobs=0))["failure_rate_percent"] is None


def test_percentiles_are_measured_over_the_window() -> None:
    values = window_values(record(100, 0, [10.0] * 90 + [1000.0] * 10), Measure())
    assert values["run_p95_ms"] is not None and 950 <= values["run_p95_ms"] <= 1050
    assert values["wait_p95_ms"] is not None and 95 <= values["wait_p95_ms"] <= 105
    assert window_values(record(5, 0), Measure())["run_p95_ms"] is None  # nothing measured


def test_the_window_covers_whole_minutes_up_to_the_open_one() -> None:
    starts = minute_starts(900, NOW)
    assert len(starts) == 15 and starts[-1] == NOW - 30_000
    assert starts[1] - starts[0] == MINUTE_MS
    assert minute_starts(90, NOW) == [NOW - 30_000 - MINUTE_MS, NOW - 30_000]


def test_rate_settings_of_the_wrong_kind_read_as_their_defaults() -> None:
    with override_settings(BULLPEN={"ALERTS": {"RATE_WINDOW": 600, "RATE_MIN_JOBS": 5}}):
        assert Measure.from_config() == Measure(600, 5)
    with override_settings(BULLPEN={"ALERTS": {"RATE_WINDOW": "1h", "RATE_MIN_JOBS": -1}}):
        assert Measure.from_config() == Measure(900, 20)


def test_the_new_rules_are_off_until_configured() -> None:
    with override_settings(BULLPEN={"QUEUE_OPTIONS": {"mail": {"alerts": {"run_p95_ms": 500}}}}):
        assert all(thresholds("shop")[rule] is None for rule in HISTORY_RULES)
        assert thresholds("mail")["run_p95_ms"] == 500


def test_an_undecided_rule_neither_resolves_nor_fires() -> None:
    tracker = AlertTracker(0)
    slow = Alert("run_p95_ms", 900, 500, window_s=900)
    assert [n.status for n in tracker.observe({"mail": [slow]}, 0)] == [FIRING]
    # Its reading failed: still firing, nothing told.
    assert tracker.observe({"mail": []}, 10, [("mail", "run_p95_ms")]) == []
    (resolved,) = tracker.observe({"mail": []}, 20)
    assert resolved.status == RESOLVED and resolved.alert.window_s == 900
    # Undecided and not firing before: nothing fires.
    assert tracker.observe({}, 30, [("mail", "run_p95_ms")]) == []


def test_a_stored_alert_keeps_its_fractional_values_and_window() -> None:
    alert = Alert("failure_rate_percent", 22.5, 12.5, window_s=600)
    notice = Notice(FIRING, "mail", alert)
    assert Notice.from_json(notice.as_json()).alert == alert


def test_a_notice_says_the_value_the_threshold_and_the_window() -> None:
    notice = Notice(FIRING, "mail", Alert("failure_rate_percent", 22.5, 10, window_s=900))
    body = messages.webhook_body(notice, "https://ops.example.com")
    assert (body["rule"], body["value"], body["threshold"], body["windowSeconds"]) == (
        "failure_rate_percent",
        22.5,
        10,
        900,
    )
    assert body["link"] == "https://ops.example.com/queues/q/mail/"
    assert messages.headline(notice) == (
        "Alert on mail: 22.5 % of jobs failed in the last 15 min, more than 10 %"
    )
    assert "Window: 900 s" in messages.email_body(notice, "https://ops.example.com")
    for rule in HISTORY_RULES:
        text = messages.describe(Alert(rule, 7, 3, window_s=3600))
        assert "7" in text and "3" in text and rule not in text


def test_a_firing_rule_is_told_again_every_renotify_seconds() -> None:
    tracker = AlertTracker(cooldown_s=900, renotify_s=600)
    waiting = Alert("waiting", 12, 10)
    assert [n.status for n in tracker.observe({"mail": [waiting]}, 0)] == [FIRING]
    assert tracker.observe({"mail": [waiting]}, 599) == []
    (again,) = tracker.observe({"mail": [Alert("waiting", 40, 10)]}, 600)
    assert (again.status, again.alert.value) == (FIRING, 40)
    assert tracker.observe({"mail": [waiting]}, 1100) == []
    assert [n.status for n in tracker.observe({"mail": []}, 1200)] == [RESOLVED]
    # Off (0): told once however long it fires.
    never = AlertTracker(cooldown_s=0)
    assert len(never.observe({"mail": [waiting]}, 0)) == 1
    assert never.observe({"mail": [waiting]}, 10**6) == []


def test_a_silenced_rule_is_told_nothing_and_an_acknowledged_one_no_repeats() -> None:
    tracker = AlertTracker(cooldown_s=0, renotify_s=60)
    waiting = Alert("waiting", 12, 10)
    key = ("mail", "waiting")
    assert tracker.observe({"mail": [waiting]}, 0, silenced=[key]) == []
    # The silence over, still firing: told then.
    assert [n.status for n in tracker.observe({"mail": [waiting]}, 10)] == [FIRING]
    assert tracker.observe({"mail": [waiting]}, 100, acknowledged=[key]) == []
    assert [n.status for n in tracker.observe({"mail": [waiting]}, 110)] == [FIRING]
    # Its end while silenced: not told either.
    assert tracker.observe({"mail": []}, 120, silenced=[key]) == []


def test_a_window_reads_its_minutes_and_stalls_the_whole_hour() -> None:
    ref = QueueRef("bull", "img", "default")
    measure = Measure(window_s=300, min_jobs=1)
    hour = minute_starts(3600, NOW)
    slow = loads_total(dumps_span({"send": record(1, 3, [5000.0] * 4, stalled=2)}))
    spans = {("m", start): slow for start in hour[-5:]}
    # Before the window: only their stalls count (their counts alone, as summaries give them).
    spans.update({("m", start): PackedRecord((50, 0, 0, 3, 0, 0)) for start in hour[:-5]})
    limits = {"failure_rate_percent": 50.0, "run_p95_ms": 1000.0, "stalled_last_hour": 100.0}
    wanted = _Wanted(["failure_rate_percent", "run_p95_ms"], 100.0)
    reading = RuleReading()
    _judge(ref, spans, limits, wanted, measure, NOW, reading)
    fired = {alert.rule: alert.value for alert in reading.alerts[ref]}
    assert fired["failure_rate_percent"] == 75.0 and fired["run_p95_ms"] >= 4900
    assert fired["stalled_last_hour"] == 5 * 2 + 55 * 3  # every minute of the hour
