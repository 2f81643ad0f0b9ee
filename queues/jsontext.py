"""JSON in and out, fast (orjson) yet as forgiving as the standard library.

orjson refuses what BullMQ data may hold (NaN, integers over 64 bits); such text falls back to
the standard library, so a job reads the same either way.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # raises ValueError for text that is not JSON at all


def dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
