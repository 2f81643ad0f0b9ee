"""Who may read the standalone site: with credentials configured, every page, API read and the
websocket need them, unless BULLPEN_OPEN_READS=1 opens reads (and a system check says so);
READ_ONLY_QUEUES makes the named queues read-only."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets

from tests.conftest import ROOT, LiveServer, http_get, start_bullpen, stop_bullpen
from tests.redis_server import RedisServer

CREDENTIALS = {"DASHBOARD_USERNAME": "ops", "DASHBOARD_PASSWORD": "pw-for-the-test"}
AUTH = "Basic " + base64.b64encode(b"ops:pw-for-the-test").decode()


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


@pytest.fixture
def closed_site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    env = standalone_env(redis_server.url, tmp_path, **CREDENTIALS)
    # As ./run serve does: the site's pages name their static files through the manifest.
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", **env},
        check=True,
        timeout=300,
    )
    server = start_bullpen(redis_server.url, tmp_path / "daphne.log", env)
    yield server
    stop_bullpen(server)


async def _websocket_answers(server: LiveServer, headers: dict[str, str]) -> bool:
    url = server.url.replace("http://", "ws://") + "/ws/bullpen/"
    try:
        async with websockets.connect(
            url,
            origin=server.url,  # type: ignore[arg-type]
            additional_headers=headers,
        ) as socket:
            await socket.send(json.dumps({"watch": "overview"}))
            await asyncio.wait_for(socket.recv(), timeout=10)
            return True
    except (websockets.exceptions.ConnectionClosed, websockets.exceptions.InvalidStatus):
        return False


def test_reads_need_the_credentials_when_they_are_configured(closed_site: LiveServer) -> None:
    base = closed_site.url + "/queues/"
    for path in ("", "api/queues/", "api/queues/email/jobs/", "find/", "q/email/"):
        status, _ = http_get(base + path)
        assert status == 401, path
        status, _ = http_get(base + path, headers={"Authorization": AUTH})
        assert status in (200, 404), path  # 404: no queue named email in this Redis
    # A browser lands on the credentials prompt, and back where it was once signed in.
    status, body = http_get(base + "sign-in?next=/queues/q/email/")
    assert status == 401 and "Sign in" in body
    assert not asyncio.run(_websocket_answers(closed_site, {}))
    assert asyncio.run(_websocket_answers(closed_site, {"Authorization": AUTH}))


def test_open_reads_are_explicit_and_warned_about(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    env = standalone_env(redis_server.url, tmp_path, **CREDENTIALS)
    assert standalone_value(env, "s.BULLPEN.get('READ_ACCESS')") is None  # the default: closed
    opened = {**env, "BULLPEN_OPEN_READS": "1"}
    assert standalone_value(opened, "s.BULLPEN['READ_ACCESS']") == "dashboard.access.anyone"
    check = subprocess.run(
        [sys.executable, "manage.py", "check", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", **opened},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "bullpen.W012" in check.stderr and check.returncode != 0


def test_read_only_queues_from_the_environment(tmp_path: Path) -> None:
    env = standalone_env("redis://127.0.0.1:1/0", tmp_path, READ_ONLY_QUEUES=" email\tbilling\n")
    assert standalone_value(env, "s.BULLPEN['QUEUE_OPTIONS']") == {
        "email": {"read_only": True},
        "billing": {"read_only": True},
    }
