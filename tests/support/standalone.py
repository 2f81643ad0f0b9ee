"""Helpers that several test modules share.

Moved here from ``tests.auth.test_standalone_access``.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.servers.live_server import LiveServer, start_bullpen
from tests.support.servers.server_forks import fork_manage

CREDENTIALS = {"DASHBOARD_USERNAME": "ops", "DASHBOARD_PASSWORD": "pw-for-the-test"}


def standalone_env(redis_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "bullpen_site.settings",
        "REDIS_URL": redis_url,
        "BULLPEN_DB": str(tmp_path / "standalone.sqlite3"),
        "SECRET_KEY": "a-test-secret-key-long-enough-for-django-" + "x" * 20,
        **extra,
    }


def standalone_value(env: dict[str, str], expression: str) -> object:
    """``expression`` evaluated in the standalone site's settings under ``env``."""
    code = f"import json, bullpen_site.settings as s; print(json.dumps({expression}))"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout)


_collected = False


@contextmanager
def static_folder_lock() -> Iterator[None]:
    """Held while collectstatic writes the site's static folder (test processes share it)."""
    folder = ROOT / "var"
    folder.mkdir(exist_ok=True)
    with (folder / ".collectstatic.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def collect_static(env: dict[str, str]) -> None:
    """As ./run serve does: the site's pages name their static files through the manifest.
    Once per test run (the files do not change during a run; the test processes of one run
    share its id), one process at a time (they share the site's folder)."""
    global _collected
    if _collected:
        return
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    with static_folder_lock():
        stamp = ROOT / "var" / ".collectstatic.run"
        if not run or not stamp.exists() or stamp.read_text() != run:
            # Forked as the servers are: a fresh interpreter imported Django and Bullpen first.
            log = ROOT / "var" / ".collectstatic.log"
            log.write_bytes(b"")
            argv = ["collectstatic", "--no-input", "-v", "0"]
            command = fork_manage(argv, {"PATH": "/usr/bin:/bin", **env}, ROOT, log)
            assert command.wait(timeout=300) == 0, log.read_text()
            stamp.write_text(run)
    _collected = True


def start_standalone(redis_url: str, tmp_path: Path, **extra: str) -> LiveServer:
    """The standalone site under daphne, with ``extra`` in its environment."""
    env = standalone_env(redis_url, tmp_path, **extra)
    collect_static(env)
    return start_bullpen(redis_url, tmp_path / "daphne.log", env)
