"""Compiles the app's translation catalogs (``dashboard/locale/*/LC_MESSAGES/django.po``) into
the ``.mo`` files gettext reads. The ``.mo`` files are generated, never committed: the wheel
build compiles them into the wheel, and ``./run`` and the tests compile them in the tree.

Babel does the compiling, so that no GNU gettext (``msgfmt``) is needed on the machine.

    python build_catalogs.py     # compile every catalog in the tree
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from setuptools.command.build_py import build_py

LOCALE_DIR = Path(__file__).resolve().parent / "dashboard" / "locale"


def compile_catalogs(locale_dir: Path = LOCALE_DIR, into: Path | None = None) -> list[Path]:
    """Writes a ``.mo`` beside (or, with ``into``, under ``into`` at the same relative path)
    each ``.po`` under ``locale_dir`` whose ``.mo`` is missing or older; returns every ``.mo``."""
    written = []
    for po_path in sorted(locale_dir.glob("*/LC_MESSAGES/*.po")):
        relative = po_path.relative_to(locale_dir).with_suffix(".mo")
        mo_path = (into or locale_dir) / relative
        written.append(mo_path)
        if mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
            continue
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file, locale=po_path.parent.parent.name)
        mo_path.parent.mkdir(parents=True, exist_ok=True)
        # Written under a temporary name first: a test process reading the catalog, or a
        # second one compiling it, at the same moment never sees half a file.
        handle, partial = tempfile.mkstemp(suffix=".partial", dir=mo_path.parent)
        with os.fdopen(handle, "wb") as mo_file:
            write_mo(mo_file, catalog)
        os.replace(partial, mo_path)
    return written


class BuildPyWithCatalogs(build_py):  # type: ignore[misc]
    """setuptools' ``build_py`` that also puts the compiled catalogs into the build."""

    def run(self) -> None:
        super().run()
        source = Path(self.get_package_dir("dashboard")) / "locale"
        compile_catalogs(source, into=Path(self.build_lib) / "dashboard" / "locale")


if __name__ == "__main__":
    for path in compile_catalogs():
        print(path)
