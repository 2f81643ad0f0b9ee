"""Alert badges: a rule's short name, and what it measured in words as the title."""

from __future__ import annotations

from django.utils import translation

from dashboard.templatetags.bullpen import alert_label, alert_text, hold_text
from queues.alerts.shown import shown_alerts
from queues.alerts.silences import Hold
from queues.alerts.thresholds import Alert

NOON = 1_764_676_800.0  # 2025-12-02 12:00:00 UTC


def test_every_rule_has_words_on_its_badge() -> None:
    assert alert_label("new_failure_signatures") == "new failure signatures"
    assert alert_label("failed_last_hour") == "failed in the last hour"
    assert alert_label("some_future_rule") == "some future rule"


def test_the_badge_title_says_what_was_measured() -> None:
    assert alert_text(Alert("waiting", 12345, 10000)) == "12,345 jobs waiting, more than 10,000"
    as_json = Alert("delayed", 3, 2).as_json()
    assert alert_text(as_json) == "3 jobs delayed, more than 2"


def test_a_badge_title_keeps_the_numbers_the_badge_shows() -> None:
    rate = Alert("failure_rate_percent", 12.5, 10, window_s=900).as_json()
    assert alert_text(rate) == "12.5 % of jobs failed in the last 15 min, more than 10 %"


def test_who_holds_an_alert_and_until_when() -> None:
    firing = [Alert("waiting", 30, 10), Alert("delayed", 9, 2)]
    holds = {
        "waiting": Hold(NOON + 3600, "bob"),
        "delayed": Hold(acknowledged_by="ann", acknowledged_at=NOON - 60),
    }
    with translation.override("en"):
        silenced, acknowledged = sorted(
            shown_alerts(firing, holds, NOON), key=lambda s: s.status, reverse=True
        )
        assert hold_text(silenced) == "silenced until 2025-12-02 13:00:00 UTC, by bob"
        assert hold_text(acknowledged) == "acknowledged by ann at 2025-12-02 11:59:00 UTC"
        # The overview holds them as JSON.
        as_json = {"status": "silenced", "hold": holds["waiting"].as_json()}
        assert hold_text(as_json) == "silenced until 2025-12-02 13:00:00 UTC, by bob"
        assert hold_text({"status": "firing"}) == ""
    with translation.override("de"):
        assert hold_text(silenced).startswith("stummgeschaltet bis ")
