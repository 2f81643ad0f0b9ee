"""``./run``'s usage and exit codes."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import ROOT


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
