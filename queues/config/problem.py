"""One thing wrong with ``settings.BULLPEN``: its check id, what is wrong, how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """A setting that cannot work as given. ``code`` is its check id: E… errors, W… warnings."""

    code: str
    message: str
    hint: str = ""


def is_number(value: Any) -> bool:
    """An int or a float, not a bool (which Python counts as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
