"""The standalone site's alerting from its environment: webhooks, e-mail and the metrics token,
and thresholds (refused by the checks, naming the key, when of the wrong kind or sign)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.standalone import standalone_env, standalone_value


@pytest.mark.unit
def test_the_standalone_site_takes_alerts_and_metrics_from_its_environment(
    tmp_path: Path,
) -> None:
    env = standalone_env(
        "redis://127.0.0.1:1/0",
        tmp_path,
        ALERT_WEBHOOK_URL="https://hooks.example.com/T0/B0/x",
        ALERT_EMAIL_TO="oncall@example.com  lead@example.com",
        ALERT_LINK_BASE="https://ops.example.com",
        EMAIL_HOST="smtp.example.com",
        EMAIL_PORT="587",
        EMAIL_HOST_USER="bullpen",
        EMAIL_HOST_PASSWORD="pw",  # noqa: S106 - a test value
        EMAIL_USE_TLS="1",
        DEFAULT_FROM_EMAIL="bullpen@example.com",
        METRICS_TOKEN="scrape-me",  # noqa: S106 - a test value
    )
    expression = (
        "[s.BULLPEN['ALERTS'], s.BULLPEN['METRICS_TOKEN'], s.EMAIL_HOST, s.EMAIL_PORT,"
        " s.EMAIL_HOST_USER, s.EMAIL_HOST_PASSWORD, s.EMAIL_USE_TLS, s.DEFAULT_FROM_EMAIL]"
    )
    assert standalone_value(env, expression) == [
        {
            "EMAIL_TO": ["oncall@example.com", "lead@example.com"],
            "WEBHOOKS": ["https://hooks.example.com/T0/B0/x"],
            "LINK_BASE": "https://ops.example.com",
        },
        "scrape-me",
        "smtp.example.com",
        587,
        "bullpen",
        "pw",
        True,
        "bullpen@example.com",
    ]
    unset = standalone_env("redis://127.0.0.1:1/0", tmp_path)
    assert standalone_value(unset, "[s.BULLPEN['METRICS_TOKEN'], s.BULLPEN['ALERTS']]") == [
        "",
        {"EMAIL_TO": [], "WEBHOOKS": [], "LINK_BASE": ""},
    ]


def manage_py_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``manage.py check`` of the standalone site with only ``env`` (and a plain PATH)."""
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_standalone_site_takes_alert_thresholds_from_its_environment(
    tmp_path: Path,
) -> None:
    given = "failure_rate_percent=12.5 waiting=None RENOTIFY=3600 RATE_WINDOW=600 INTERVAL=10"
    env = standalone_env("redis://127.0.0.1:1/0", tmp_path, ALERT_THRESHOLDS=given)
    assert standalone_value(env, "s.BULLPEN['ALERTS']") == {
        "EMAIL_TO": [],
        "WEBHOOKS": [],
        "LINK_BASE": "",
        "failure_rate_percent": 12.5,
        "waiting": None,
        "RENOTIFY": 3600,
        "RATE_WINDOW": 600,
        "INTERVAL": 10,
    }
    # A value of the wrong kind or sign: the checks refuse it, naming the key.
    check = manage_py_check({**env, "ALERT_THRESHOLDS": "run_p95_ms=-1 COOLDOWN=soon"})
    assert check.returncode != 0
    assert "BULLPEN['ALERTS']['run_p95_ms'] must be a number, 0 or more" in check.stderr
    assert "BULLPEN['ALERTS']['COOLDOWN'] must be a number of seconds" in check.stderr
    # An item that is not key=value stops the site as its settings load.
    loading = manage_py_check({**env, "ALERT_THRESHOLDS": "waiting"})
    assert loading.returncode != 0
    assert "ALERT_THRESHOLDS: 'waiting' is not <key>=<value>" in loading.stderr
