"""``./run``'s usage and exit codes, and what ``./run demo`` checks before it starts anything.

``./run demo`` would create a virtualenv: the demo's own module is run with this Python."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from bullpen_site.demo import silenced_checks
from tests.support.paths import ROOT
from tests.support.servers.redis_server import RedisServer


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False, env=env
    )


@pytest.mark.parametrize("args", [[], ["help"], ["--help"]])
def test_usage_exits_0(args: list[str]) -> None:
    result = run("./run", *args)
    assert result.returncode == 0
    assert "./run demo" in result.stdout and "./run test" in result.stdout
    assert result.stderr == ""


def test_unknown_command_exits_2_with_usage() -> None:
    result = run("./run", "deploy")
    assert result.returncode == 2
    assert result.stderr.startswith("Unknown command: deploy\n")
    assert "./run demo" in result.stderr and result.stdout == ""


def test_fast_tier_runs_with_nothing_but_the_virtualenv() -> None:
    # ./run test-fast puts only the virtualenv on PATH: no redis-server, node or chromium.
    result = run(
        "./run", "test-fast", "-q", "-p", "no:cacheprovider", "tests/unit/forms/test_converters.py"
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "failed" not in result.stdout


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def demo_env(port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DASHBOARD_", "REDIS_"))}
    return {**env, "PORT": str(port), "HOST": "127.0.0.1"}


def test_demo_on_a_taken_port_stops_at_once(taken_port: int) -> None:
    started = time.monotonic()
    result = run(sys.executable, "-m", "bullpen_site.demo", env=demo_env(taken_port))
    assert time.monotonic() - started < 10  # no Redis, workers or server were started
    assert result.returncode != 0
    assert f"port {taken_port} is in use; set PORT=" in result.stderr
    output = result.stdout + result.stderr
    assert "Credentials" not in output and "Embedded Redis" not in output
    # ./run demo asks the same before it migrates anything.
    check = run(sys.executable, "-m", "bullpen_site.demo", "--check-port", env=demo_env(taken_port))
    assert check.returncode != 0 and f"port {taken_port} is in use" in check.stderr


def test_check_port_passes_a_free_port() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    result = run(sys.executable, "-m", "bullpen_site.demo", "--check-port", env=demo_env(port))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_bad_port_is_named() -> None:
    env = {**demo_env(0), "PORT": "eighty"}
    result = run(sys.executable, "-m", "bullpen_site.demo", "--check-port", env=env)
    assert result.returncode != 0 and "PORT='eighty' is not a port number" in result.stderr


@pytest.mark.parametrize(
    ("host", "w010"),
    [("127.0.0.1", False), ("localhost", False), ("0.0.0.0", True)],  # noqa: S104
)
def test_demo_checks_warn_only_about_what_applies(
    redis_server: RedisServer, host: str, w010: bool
) -> None:
    # The demo's processes, as it starts them: its credentials, its Redis, its settings.
    env = {
        **demo_env(8000),
        "DJANGO_SETTINGS_MODULE": "bullpen_site.settings",
        "REDIS_URL": redis_server.url,
        "DASHBOARD_USERNAME": "demo",
        "DASHBOARD_PASSWORD": "pw-for-the-test",
        "BULLPEN_SILENCED_CHECKS": silenced_checks(host),
    }
    result = run(sys.executable, "manage.py", "check", "--fail-level", "WARNING", env=env)
    # On loopback nothing applies; served to the network, the clear-text warning does.
    assert ("bullpen.W010" in result.stderr) is w010, result.stderr
    assert (result.returncode == 0) is not w010
    assert "bullpen.W009" not in result.stderr and "bullpen.W012" not in result.stderr
