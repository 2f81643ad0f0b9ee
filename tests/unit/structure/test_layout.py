"""The house rules a newcomer can rely on: a folder holds at most 20 modules of its own (its
``__init__.py`` aside), and no module is longer than 400 lines."""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import ROOT

PACKAGES = ("dashboard", "queues")
MAX_MODULES = 20
MAX_LINES = 400


def folders() -> list[Path]:
    return sorted({path.parent for package in PACKAGES for path in (ROOT / package).rglob("*.py")})


def test_no_folder_holds_more_than_twenty_modules() -> None:
    crowded = {}
    for folder in folders():
        own = [path for path in folder.glob("*.py") if path.name != "__init__.py"]
        if len(own) > MAX_MODULES:
            crowded[str(folder.relative_to(ROOT))] = len(own)
    assert folders() and not crowded, crowded


def test_no_module_is_longer_than_four_hundred_lines() -> None:
    long = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_LINES:
                long[str(path.relative_to(ROOT))] = lines
    assert not long, long
