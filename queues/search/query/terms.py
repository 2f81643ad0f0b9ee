"""One term of a query and what it matches in a job (a row as queues/reads decodes it).

``matched_in`` answers where a term matched (``name``, ``data``, ``failedReason``, ``id``,
``logs``, ``data.<path>``...), or None. Text compares ignoring case; a path term compares the
JSON value it finds (``=`` as the one-clause search always has: the value, or its text);
numbers and times compare as numbers, and a job without the field matches no comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from queues.reads.jsontext import dumps
from queues.search.query.values import is_number

# The job field each text field reads.
TEXT_SOURCES = {"name": "name", "reason": "failedReason", "id": "id"}
_MISSING = object()


@dataclass(frozen=True)
class Term:
    """``kind``: "text" (free text), "name", "reason", "id", "logs", "field" (a path in
    ``root``: data, opts or returnvalue), "number" or "time" (``root`` names the field).
    ``text``: lowered text to look for; ``value``: what ``=`` compares with (a number for
    comparisons and times)."""

    kind: str
    text: str = ""
    path: tuple[str, ...] = ()
    value: Any = None
    op: str = ":"
    root: str = ""

    def matches(self, job: dict[str, Any]) -> bool:
        return self.matched_in(job) is not None

    def matched_in(self, job: dict[str, Any]) -> str | None:
        return self._matcher(job)

    @cached_property
    def _matcher(self) -> Callable[[dict[str, Any]], str | None]:
        """This term's test, chosen once: it runs on every job a search reads."""
        if self.kind == "text":
            needle = self.text
            return lambda job: _free_text(job, needle)
        if self.kind in TEXT_SOURCES:
            source = TEXT_SOURCES[self.kind]
            return lambda job: source if self._text_holds(str(job.get(source) or "")) else None
        if self.kind == "logs":
            return self._in_logs
        if self.kind == "field" and self.op in ("=", "=="):
            return self._field_equals
        if self.kind == "field":
            label = f"{self.root}." + ".".join(self.path)
            return lambda job: (
                label if self._value_holds(_walk(job.get(self.root), self.path)) else None
            )
        return lambda job: self.root if self._value_holds(job.get(self.root, _MISSING)) else None

    def _in_logs(self, job: dict[str, Any]) -> str | None:
        lines = job.get("logs") or []
        return "logs" if any(self.text in str(line).lower() for line in lines) else None

    @cached_property
    def _label(self) -> str:
        return f"{self.root}." + ".".join(self.path)

    @cached_property
    def _value_text(self) -> str:
        return str(self.value)

    def _field_equals(self, job: dict[str, Any]) -> str | None:
        # As the one-clause search always compared: the value, or its text.
        found = _walk(job.get(self.root), self.path)
        if found is _MISSING:
            return None
        if found == self.value or str(found) == self._value_text:
            return self._label
        return None

    def _text_holds(self, found: str) -> bool:
        if self.op == "=":
            return found.lower() == self.text
        if self.op == "!=":
            return found.lower() != self.text
        return self.text in found.lower()

    def _value_holds(self, found: Any) -> bool:
        if self.op == "!=":
            return found is _MISSING or not (found == self.value or str(found) == str(self.value))
        if found is _MISSING:
            return False
        if self.op in ("=", "=="):
            return bool(found == self.value) or str(found) == str(self.value)
        if found is None:
            return False
        if self.op == ":":
            text = found if isinstance(found, str) else dumps(found).decode()
            return self.text in text.lower()
        if not is_number(found):
            return False
        number, limit = float(found), float(self.value)
        if self.op == ">":
            return number > limit
        if self.op == ">=":
            return number >= limit
        if self.op == "<":
            return number < limit
        return number <= limit


def _walk(current: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif (
            isinstance(current, list)
            and part.isascii()
            and part.isdigit()
            and int(part) < len(current)
        ):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def _free_text(job: dict[str, Any], needle: str) -> str | None:
    data = job.get("data")
    data_text = data if isinstance(data, str) else dumps(data).decode()
    for field, value in (
        ("name", job.get("name") or ""),
        ("data", data_text),
        ("failedReason", job.get("failedReason") or ""),
    ):
        if needle in str(value).lower():
            return field
    return None
