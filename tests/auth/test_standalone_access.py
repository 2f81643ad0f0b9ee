"""Who may read the standalone site: with credentials configured, every page, API read and the
websocket need them, unless BULLPEN_OPEN_READS=1 opens reads (and a system check says so);
READ_ONLY_QUEUES makes the named queues read-only."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets

from bullpen_site.secret_key import stored_secret_key
from tests.support.paths import ROOT
from tests.support.servers.live_server import LiveServer, http_get, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import (
    CREDENTIALS,
    standalone_env,
    standalone_value,
    start_standalone,
    static_folder_lock,
)

AUTH = "Basic " + base64.b64encode(b"ops:pw-for-the-test").decode()


@pytest.fixture
def closed_site(redis_server: RedisServer, tmp_path: Path) -> Iterator[LiveServer]:
    server = start_standalone(redis_server.url, tmp_path, **CREDENTIALS)
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


def test_a_secret_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    path = tmp_path / "var" / "secret_key"
    key = stored_secret_key(path)
    assert len(key) >= 50 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stored_secret_key(path) == key  # reused on the next start
    assert stored_secret_key(tmp_path / "other" / "secret_key") != key
    assert [p.name for p in path.parent.iterdir()] == ["secret_key"]  # no leftovers


def test_no_fixed_secret_key_in_the_standalone_site(tmp_path: Path) -> None:
    env = standalone_env("redis://127.0.0.1:1/0", tmp_path)
    del env["SECRET_KEY"]
    key = standalone_value(env, "s.SECRET_KEY")
    assert isinstance(key, str) and len(key) >= 50 and "insecure" not in key
    assert standalone_value(env, "s.SECRET_KEY") == key
    assert (ROOT / "var" / "secret_key").read_text().strip() == key
    assert (
        subprocess.run(
            ["git", "check-ignore", "-q", "var/secret_key"], cwd=ROOT, check=False
        ).returncode
        == 0
    )


def test_production_env_passes_the_deploy_checks(redis_server: RedisServer, tmp_path: Path) -> None:
    """The production environment docs/deployment.md gives: ``check --deploy`` reports nothing
    at all, and prints no warning of any kind."""
    env = standalone_env(
        redis_server.url,
        tmp_path,
        **CREDENTIALS,
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="ops.example.com",
        CSRF_TRUSTED_ORIGINS="https://ops.example.com  https://ops2.example.com",
        BULLPEN_BEHIND_TLS_PROXY="1",
    )
    tls = standalone_value(
        env,
        "[s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD, "
        "s.CSRF_TRUSTED_ORIGINS]",
    )
    assert tls == [
        ["HTTP_X_FORWARDED_PROTO", "https"],
        True,
        True,
        31536000,
        True,
        False,
        ["https://ops.example.com", "https://ops2.example.com"],
    ]

    def manage(*args: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-W", "error::UserWarning", "manage.py", *args],
            cwd=ROOT,
            env={"PATH": "/usr/bin:/bin", **env, **(extra or {})},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    # As a deployment does before it serves (docs/deployment.md).
    with static_folder_lock():
        assert manage("collectstatic", "--no-input", "-v", "0").returncode == 0
    check = manage("check", "--deploy")
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == "System check identified no issues (1 silenced).", check.stdout
    assert check.stderr == ""
    # Asking for preloading answers Django's reminder, which is then no longer silenced.
    preload = manage("check", "--deploy", extra={"BULLPEN_HSTS_PRELOAD": "1"})
    assert preload.stdout.strip() == "System check identified no issues (0 silenced).", (
        preload.stdout + preload.stderr
    )
