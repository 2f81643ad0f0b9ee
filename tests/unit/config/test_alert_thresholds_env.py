"""The standalone site's ALERT_THRESHOLDS: "key=value" items into keys of ALERTS (pure logic)."""

from __future__ import annotations

import pytest

from bullpen_site.env_access import BadEnvironment
from bullpen_site.env_alerts import thresholds


def test_numbers_none_and_text_kept_for_the_checks() -> None:
    assert thresholds(" waiting=5000\tdelayed=None COOLDOWN=1.5 RENOTIFY=lots ") == {
        "waiting": 5000,
        "delayed": None,
        "COOLDOWN": 1.5,
        "RENOTIFY": "lots",  # refused by the system checks, by its key
    }
    assert thresholds("") == {}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("waiting", "'waiting' is not <key>=<value>"),
        ("=5", "is not <key>=<value>"),
        ("waiting=", "is not <key>=<value>"),
        ("EMAIL_TO=a@example.com", "set by ALERT_EMAIL_TO"),
    ],
)
def test_an_item_that_is_not_key_value_stops_the_site(text: str, words: str) -> None:
    with pytest.raises(BadEnvironment, match="ALERT_THRESHOLDS") as raised:
        thresholds(text)
    assert words in str(raised.value)
