"""What the pages list of one queue's alerts: firing ones first, then acknowledged, then
silenced; a silence shown while it runs, firing or not; an acknowledgement only while firing."""

from __future__ import annotations

from queues.alerts.shown import ACKNOWLEDGED, FIRING, SILENCED, shown_alerts, status_of
from queues.alerts.silences import Hold
from queues.alerts.thresholds import Alert

NOW = 1_000_000.0


def test_a_running_silence_wins_over_an_acknowledgement() -> None:
    assert status_of(None, NOW) == FIRING
    assert status_of(Hold(acknowledged_by="ann"), NOW) == ACKNOWLEDGED
    assert status_of(Hold(NOW + 60, "bob", "ann"), NOW) == SILENCED
    # Its silence over, an acknowledged alert is acknowledged again.
    assert status_of(Hold(NOW - 1, "bob", "ann"), NOW) == ACKNOWLEDGED
    assert status_of(Hold(NOW - 1, "bob"), NOW) == FIRING


def test_loud_ones_first_then_in_the_rules_order() -> None:
    firing = [
        Alert("delayed", 9, 2),
        Alert("failed_last_hour", 5, 1),
        Alert("waiting", 30, 10),
        Alert("stalled_last_hour", 4, 1, window_s=3600),
    ]
    holds = {
        "waiting": Hold(NOW + 600, "bob"),
        "failed_last_hour": Hold(acknowledged_by="ann"),
        # Silenced ahead of firing: listed, to be unsilenced.
        "new_failure_signatures": Hold(NOW + 60, "cy"),
        # Acknowledged, no longer firing, not yet ended by the sender: nothing to show.
        "run_p95_ms": Hold(acknowledged_by="ann"),
        # A silence that ran out says nothing.
        "oldest_waiting_seconds": Hold(NOW - 5, "bob"),
    }
    shown = shown_alerts(firing, holds, NOW)
    assert [(s.rule, s.status, s.firing) for s in shown] == [
        ("delayed", FIRING, True),
        ("stalled_last_hour", FIRING, True),
        ("failed_last_hour", ACKNOWLEDGED, True),
        ("waiting", SILENCED, True),
        ("new_failure_signatures", SILENCED, False),
    ]
    assert shown[3].hold.silenced_by == "bob"
    assert shown[3].silenced_until_ms == int((NOW + 600) * 1000)
    assert shown[0].silenced_until_ms is None
    assert shown[4].alert is None


def test_nothing_firing_nor_held_shows_nothing() -> None:
    assert shown_alerts([], {}, NOW) == []
