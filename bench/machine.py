"""Facts a report states about the machine and the software measured: CPU model and versions."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

from servers import NODE_DIR, REPO_DIR


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def node_pkg_version(name: str) -> str:
    try:
        data = json.loads((NODE_DIR / "node_modules" / name / "package.json").read_text())
        return str(data["version"])
    except (OSError, KeyError, ValueError):
        return "?"


def cmd_output(argv: list[str], cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=30)
        return (proc.stdout or proc.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def bullpen_version() -> str:
    rev = cmd_output(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_DIR)
    dirty = cmd_output(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_DIR)
    return f"git {rev}{' (+ uncommitted changes)' if dirty and dirty != '?' else ''}"


def python_pkg_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return "?"
