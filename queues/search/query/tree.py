"""A parsed query: terms joined by AND, OR and NOT. Every node answers ``matched_in`` (where in
the job it matched, for the excerpt shown, or None) and ``matches``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from queues.search.query.terms import Term


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Node, ...]

    def matched_in(self, job: dict[str, Any]) -> str | None:
        found = ""
        for part in self.parts:
            where = part.matched_in(job)
            if where is None:
                return None
            found = found or where
        return found or "name"

    def matches(self, job: dict[str, Any]) -> bool:
        return self.matched_in(job) is not None


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Node, ...]

    def matched_in(self, job: dict[str, Any]) -> str | None:
        for part in self.parts:
            where = part.matched_in(job)
            if where is not None:
                return where
        return None

    def matches(self, job: dict[str, Any]) -> bool:
        return self.matched_in(job) is not None


@dataclass(frozen=True)
class Not:
    part: Node

    def matched_in(self, job: dict[str, Any]) -> str | None:
        # What a job does not hold cannot be shown: its match is shown by its name.
        return None if self.part.matched_in(job) is not None else ""

    def matches(self, job: dict[str, Any]) -> bool:
        return self.matched_in(job) is not None


Node = Term | AllOf | AnyOf | Not


def terms(node: Node) -> Iterator[Term]:
    """Every term of ``node``, left to right (without recursion: nesting is capped, but a
    walk need not rely on it)."""
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Term):
            yield current
        elif isinstance(current, Not):
            stack.append(current.part)
        else:
            stack.extend(reversed(current.parts))
