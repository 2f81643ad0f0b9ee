"""The page scripts' own tests (tests/js/, node's built-in test runner) run with the suite: the
helpers every script shares (static/bullpen/util.js) fill in words, pick plural forms, group
counts and keep the preferences cookie as the server reads it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.unit


def test_node_test_runner_passes_the_script_tests() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the page scripts' tests (tests/js/) need Node 20")
    done = subprocess.run(
        [node, "--test", "tests/js/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert "# fail 0" in report and "# pass 0" not in report, report
