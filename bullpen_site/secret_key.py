"""The standalone site's SECRET_KEY when the environment gives none: random, made on first
start into a file only its owner can read, and the same on every start after."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.core.management.utils import get_random_secret_key


def stored_secret_key(path: Path) -> str:
    """The key kept in ``path``, written there first (mode 0600) when there is none."""
    key = _read(path)
    if key:
        return key
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole under a temporary name, then linked into place: several processes starting
    # at once all end up with the first one's key, and none reads a half-written file.
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")  # mode 0600
    try:
        with os.fdopen(handle, "w") as out:
            out.write(get_random_secret_key())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(temporary)
    key = _read(path)
    if not key:
        raise RuntimeError(f"{path} holds no secret key: remove it, or set SECRET_KEY")
    return key


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""
