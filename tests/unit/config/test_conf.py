"""Bullpen's settings: every setting read is known, validated and reset where it is cached; the
queue layer's imports form no cycle."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from dashboard.checks import access_settings, mounting
from queues.config import settings

ROOT = Path(__file__).resolve().parents[3]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The ``queues`` modules ``path`` imports, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {module for module in found if module in modules and module != name}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph``, or [] when there is none (depth-first search)."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        for imported in sorted(graph[module]):
            cycle = visit(imported, [*path, module])
            if cycle:
                return cycle
        done.add(module)
        return []

    for module in sorted(graph):
        cycle = visit(module, [])
        if cycle:
            return cycle
    return []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_queue_modules_import_one_way() -> None:
    paths = {_module_name(path): path for path in (ROOT / "queues").rglob("*.py")}
    graph = {name: _imports(path, name, set(paths)) for name, path in paths.items()}
    assert "queues.config.settings" in graph["queues.redis.clients"]  # the walk sees imports
    assert _cycle(graph) == []


def test_settings_changes_reach_the_resets_registered() -> None:
    calls: list[str] = []
    reset = settings.on_change(lambda: calls.append("reset"))
    try:
        with override_settings(BULLPEN={"PREFIXES": ["other"]}):
            assert settings.get_config()["PREFIXES"] == ["other"]
            assert calls == ["reset"]
        assert calls == ["reset", "reset"]  # and again when the override ends
        with override_settings(DEBUG=True):
            assert calls == ["reset", "reset"]  # other settings leave Bullpen's state alone
    finally:
        settings._resets.remove(reset)


# A setting read from the merged dict: get_config()["X"], config.get("X", ...) and the like
# (a module may import get_config under another name ending in "config").
_READ = re.compile(r"""(?:config\(\)|config)(?:\[|\.get\()\s*["']([A-Z][A-Z_]*)["']""")


def test_every_setting_read_is_known() -> None:
    read: set[str] = set()
    for folder in ("queues", "dashboard"):
        for path in (ROOT / folder).rglob("*.py"):
            read.update(_READ.findall(path.read_text()))
    assert {"REDIS_URL", "SEARCH_BUDGET", "SEARCH_FIELD_CAP"} <= read  # the pattern matches
    assert read <= set(settings.DEFAULTS), sorted(read - set(settings.DEFAULTS))


def _wrong(default: Any) -> Any:
    """A value of another type than ``default``'s."""
    if isinstance(default, bool):
        return "yes"
    if isinstance(default, (int, float)):
        return "many"
    if isinstance(default, str):
        return 12
    if isinstance(default, list):
        return 12
    return "not a dict"


@pytest.mark.parametrize("key", sorted(settings.DEFAULTS))
def test_every_setting_is_validated(key: str) -> None:
    with override_settings(BULLPEN={key: _wrong(settings.DEFAULTS[key])}):
        found = mounting.check_settings() + access_settings.check_access()
    assert any(str(message.id).startswith("bullpen.E") and key in message.msg for message in found)
