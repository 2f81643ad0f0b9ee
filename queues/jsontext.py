"""JSON in and out, fast (orjson) yet as forgiving as the standard library.

orjson refuses what BullMQ data may hold (NaN, integers over 64 bits); such text falls back to
the standard library, so a job reads the same either way. Node writes JSON of any depth;
``loads_shown`` refuses what is nested too deeply to show or write back, as :class:`TooDeep`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# Deepest nesting a shown value may have: below orjson's limit for writing (254 levels) and far
# below Python's recursion limit, which the standard library's parser and writer run into.
MAX_DEPTH = 200
# A string (escapes included) or one bracket: what the depth scan steps over.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


class TooDeep(ValueError):
    """JSON text nested deeper than MAX_DEPTH levels."""


def loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # raises ValueError for text that is not JSON at all


def loads_shown(text: str) -> Any:
    """``loads`` for a value the dashboard shows: TooDeep (a ValueError) for one nested deeper
    than MAX_DEPTH, instead of a RecursionError or a value nothing can write again."""
    if text.count("[") + text.count("{") > MAX_DEPTH and depth(text) > MAX_DEPTH:
        raise TooDeep(f"nested deeper than {MAX_DEPTH} levels")
    return loads(text)


def depth(text: str) -> int:
    """How deep brackets nest in JSON text (strings skipped); stops counting past MAX_DEPTH."""
    level = deepest = 0
    for token in _TOKEN.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            level += 1
            if level > deepest:
                deepest = level
                if deepest > MAX_DEPTH:
                    break
        elif bracket in "]}":
            level -= 1
    return deepest


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
