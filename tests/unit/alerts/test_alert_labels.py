"""Alert badges: a rule's short name, and what it measured in words as the title."""

from __future__ import annotations

from dashboard.templatetags.bullpen import alert_label, alert_text
from queues.alerts.thresholds import Alert


def test_every_rule_has_words_on_its_badge() -> None:
    assert alert_label("new_failure_signatures") == "new failure signatures"
    assert alert_label("failed_last_hour") == "failed in the last hour"
    assert alert_label("some_future_rule") == "some future rule"


def test_the_badge_title_says_what_was_measured() -> None:
    assert alert_text(Alert("waiting", 12345, 10000)) == "12,345 jobs waiting, more than 10,000"
    as_json = Alert("delayed", 3, 2).as_json()
    assert alert_text(as_json) == "3 jobs delayed, more than 2"
