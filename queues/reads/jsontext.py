"""JSON in and out, fast (orjson) yet as forgiving as the standard library.

orjson refuses what BullMQ data may hold (NaN, integers over 64 bits); such text falls back to
the standard library, so a job reads the same either way. Node writes JSON of any depth;
``loads_shown`` refuses what is nested too deeply to show or write back, as :class:`TooDeep`.

Node also writes text cut inside an emoji (half of a UTF-16 surrogate pair) as a ``\ud83c``
escape, which no page, answer or log can encode: every string decoded here reads such a lone
surrogate as U+FFFD. Every decoder of stored or given JSON goes through this module.
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
# A surrogate's escape in JSON text, and a surrogate in decoded text (left alone only in pairs,
# which the decoders join into one character).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class TooDeep(ValueError):
    """JSON text nested deeper than MAX_DEPTH levels."""


def loads(text: str) -> Any:
    """JSON text decoded; ValueError for text that is not JSON, or is nested deeper than the
    standard library's parser can go (RecursionError is one no caller expects). Lone
    surrogates (text Node cut inside an emoji) read as U+FFFD: nothing could encode them."""
    value = loads_as_written(text)
    if isinstance(value, (str, list, dict)) and _SURROGATE_ESCAPE.search(text):
        return without_lone_surrogates(value)
    return value


def loads_as_written(text: str) -> Any:
    """``loads`` keeping lone surrogates, as BullMQ's own decoding does: what a job handler
    receives must be what its producer wrote."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text)  # raises ValueError for text that is not JSON at all
    except RecursionError:
        raise TooDeep("nested too deeply to read") from None


def without_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) read as U+FFFD.
    Walked without recursion: a value as deep as the parser allows is walked too."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if not isinstance(value, (list, dict)):
        return value
    root: list[Any] = [value]
    pending: list[tuple[list[Any] | dict[str, Any], Any, Any]] = [(root, 0, value)]
    while pending:
        parent, key, item = pending.pop()
        if isinstance(item, str):
            parent[key] = _SURROGATE.sub("\ufffd", item)
        elif isinstance(item, list):
            copy: list[Any] = list(item)
            parent[key] = copy
            pending.extend((copy, index, child) for index, child in enumerate(item))
        elif isinstance(item, dict):
            fixed: dict[str, Any] = {}
            for name, child in item.items():
                fixed[_SURROGATE.sub("\ufffd", name)] = child
            parent[key] = fixed
            pending.extend((fixed, name, child) for name, child in fixed.items())
    return root[0]


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
