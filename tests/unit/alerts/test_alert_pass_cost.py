"""What an alert pass keeps between passes to cost less, and that it decides the same: a
window's values while its minutes are unchanged, each queue's thresholds while the settings
are (pure logic)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings

from queues.alerts import decided, rules
from queues.alerts.decided import Mark, recall, remember
from queues.alerts.rules import (
    Measure,
    RuleReading,
    _judge,
    _Wanted,
    minute_starts,
    window_values,
)
from queues.alerts.thresholds import Alert, thresholds
from queues.history.packed import PackedRecord, added, loads_total, unpacked
from queues.history.record import NameRecord, dumps_span
from queues.history.storage import MINUTE_MS
from queues.reads.keys import QueueRef

pytestmark = pytest.mark.unit

NOW = 28_333_333 * MINUTE_MS + 30_000
REF = QueueRef("bull", "img", "default")
MEASURE = Measure(window_s=300, min_jobs=1)
WANTED = _Wanted(["failure_rate_percent", "run_p95_ms"], 10.0)
LIMITS: dict[str, float | None] = {
    "failure_rate_percent": 50.0,
    "run_p95_ms": 1000.0,
    "stalled_last_hour": 10.0,
}


@pytest.fixture(autouse=True)
def nothing_judged() -> Iterator[None]:
    rules._judged.clear()
    yield
    rules._judged.clear()


def minute(completed: int, failed: int, run_ms: float, stalled: int = 0) -> PackedRecord:
    found = NameRecord(completed=completed, failed=failed, stalled=stalled)
    for _ in range(completed + failed):
        found.run.add(run_ms)
    return loads_total(dumps_span({"send": found}))


def judged(spans: dict[tuple[str, int], PackedRecord], stalled_before: int = 0) -> dict[str, float]:
    reading = RuleReading()
    _judge(REF, spans, LIMITS, WANTED, MEASURE, NOW, reading, stalled_before=stalled_before)
    return {alert.rule: alert.value for alert in reading.alerts.get(REF, [])}


def test_an_unchanged_window_gives_its_values_again_and_a_changed_one_new_ones() -> None:
    window = minute_starts(300, NOW)
    slow = minute(1, 3, 5000.0)
    spans = {("m", start): slow for start in window}
    fired = judged(spans)
    assert fired == {"failure_rate_percent": 75.0, "run_p95_ms": pytest.approx(5000, rel=0.05)}
    kept = rules._judged[REF][2]
    assert judged(dict(spans)) == fired and rules._judged[REF][2] is kept
    # The open minute recorded more since: its record is another, and the values follow it.
    busy = {**spans, ("m", window[-1]): minute(400, 0, 10.0)}
    assert judged(busy) == {}
    assert rules._judged[REF][2] is not kept
    # The same records measured otherwise (fewer than RATE_MIN_JOBS finished) are measured again.
    assert rules._window_values(REF, list(spans.values()), Measure(300, 1000)) == {
        "failure_rate_percent": None,
        "run_p95_ms": pytest.approx(5000, rel=0.05),
        "wait_p95_ms": None,
    }


def test_the_hours_stalls_before_the_window_add_to_those_in_it() -> None:
    window = minute_starts(300, NOW)
    spans = {("m", start): minute(10, 0, 10.0, stalled=1) for start in window}
    assert judged(spans, stalled_before=5) == {}  # 5 + 5 stalls: not above 10
    assert judged(spans, stalled_before=6) == {"stalled_last_hour": 11}


def test_thresholds_follow_the_settings_they_were_worked_out_from() -> None:
    with override_settings(BULLPEN={"QUEUE_OPTIONS": {"mail": {"alerts": {"waiting": 5}}}}):
        assert thresholds("mail")["waiting"] == 5
        assert thresholds("mail") is thresholds("mail")  # worked out once
    with override_settings(BULLPEN={"QUEUE_OPTIONS": {"mail": {"alerts": {"waiting": 7}}}}):
        assert thresholds("mail")["waiting"] == 7
    with override_settings(BULLPEN={"ALERTS": {"run_p95_ms": 900}}):
        assert thresholds("mail")["waiting"] == 10_000
        assert thresholds("mail")["run_p95_ms"] == 900


def test_a_history_decision_is_recalled_only_from_the_same_minute_and_last_recording() -> None:
    decided._decided.clear()
    limits = thresholds("img")
    mark = Mark("28333332", 28_333_333, MEASURE, limits)
    assert recall(REF, mark) is None
    stalled = [Alert("stalled_last_hour", 11, 10.0, window_s=3600)]
    remember(REF, mark, stalled)
    assert recall(REF, Mark("28333332", 28_333_333, MEASURE, limits)) == stalled
    assert recall(QueueRef("bull", "other", "default"), mark) is None
    # A minute recorded since, the next minute, another window, other thresholds: read again.
    assert recall(REF, Mark("28333333", 28_333_333, MEASURE, limits)) is None
    assert recall(REF, Mark("28333332", 28_333_334, MEASURE, limits)) is None
    assert recall(REF, Mark("28333332", 28_333_333, Measure(600, 1), limits)) is None
    assert recall(REF, Mark("28333332", 28_333_333, MEASURE, dict(limits))) is None
    # A window reaching back to minutes whose sketches expire meanwhile is never recalled.
    decided._decided.clear()
    long_window = Mark("28333332", 28_333_333, Measure(3 * 3600, 1), limits)
    remember(REF, long_window, stalled)
    assert recall(REF, long_window) is None
    decided._decided.clear()


def test_a_packed_windows_values_are_those_of_its_sketches() -> None:
    windows = [
        [minute(1, 3, 5000.0), minute(400, 0, 10.0)],
        [minute(0, 0, 1.0)],
        [minute(2, 0, 0.0, stalled=3)],
        [minute(50 + i, i % 4, 10.0 + 37 * i) for i in range(15)],
    ]
    for records in windows:
        total = added(records)
        for measure in (MEASURE, Measure(300, 1000)):
            assert rules.packed_window_values(total, measure) == window_values(
                unpacked(total), measure
            )
