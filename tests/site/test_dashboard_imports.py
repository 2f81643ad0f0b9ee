"""A web process loads the dashboard without the worker runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Loads every view module through the URLconf, then lists what of the runner came along.
_PROBE = """
import sys
import django
django.setup()
import dashboard.urls, dashboard.pages.views, dashboard.api.worker_runner_views, dashboard.routing
from django.urls import get_resolver
get_resolver().url_patterns
print(sorted(name for name in sys.modules if name.startswith("queues.runner")))
"""


def test_the_dashboard_does_not_import_the_worker_runner() -> None:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"
