"""Masking the job fields named by field paths, before a job leaves the server.

A path names a JSON field of a job (``data``, ``returnvalue``, ``opts`` or ``progress``), then
keys inside it, separated by dots: ``data.password``, ``data.card.number``. A segment may be
a glob (``*``, ``?``, ``[abc]``, matched against a key or a list index), and ``**`` stands
for any number of levels, none included: ``data.*.token``, ``**.apiKey``. A matched value is
replaced by :data:`MARKER` and its key kept, so people see the field exists.

Pure: :func:`compile_paths` once, then :func:`mask` on each parsed value (or
:func:`redact_job` on a decoded job hash). Nothing here reads settings or Redis.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import translate
from typing import Any

from queues.reads.jsontext import MAX_DEPTH, depth

MARKER = "[redacted]"
# The fields of a decoded job a path may start at: those BullMQ stores as JSON.
ROOTS = ("data", "returnvalue", "opts", "progress")
ANY_DEPTH = "**"

Matcher = Callable[[str], bool]
# One path: a matcher per segment (the root included), None for ``**``.
Pattern = tuple[Matcher | None, ...]
# Where a walk stands: (which path, index of its next segment) for every path still alive.
States = frozenset[tuple[int, int]]
# Bounds the memory of moves (keys are job data: a hostile job may have many distinct ones).
_MOVES_KEPT = 50_000


class PathError(ValueError):
    """A field path that cannot be used, with the reason."""


@dataclass(frozen=True)
class Rules:
    """Compiled paths: for each root they reach, where the walk starts inside its value."""

    patterns: tuple[Pattern, ...]
    # Each path's segments as written where they are plain keys, None for globs and ``**``.
    literals: tuple[tuple[str | None, ...], ...]
    starts: dict[str, States]
    # Roots masked whole (a path that is just ``data``, or ends in ``**`` right after it).
    whole: frozenset[str]
    # Every root a path reaches, into it or whole.
    roots: frozenset[str]
    # (states, key) -> (the key's value is masked, states inside it): jobs repeat their keys,
    # so a walk is mostly dict lookups.
    _moves: dict[tuple[States, str], tuple[bool, States]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _only: dict[States, tuple[str, ...] | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def only_keys(self, states: States) -> tuple[str, ...] | None:
        """The only keys ``states`` can go into when every path's next segment is a plain key
        (a walk then looks those up instead of visiting every key); None if any is a glob."""
        if states in self._only:
            return self._only[states]
        keys: set[str] = set()
        for number, index in states:
            literal = self.literals[number][index]
            if literal is None:
                keys.clear()
                break
            keys.add(literal)
        found = tuple(sorted(keys)) if keys else None
        self._only[states] = found
        return found

    def move(self, states: States, key: str) -> tuple[bool, States]:
        """Going into ``key`` from ``states``: whether a path ends there, and where the walk
        stands inside it."""
        known = self._moves.get((states, key))
        if known is not None:
            return known
        hit = False
        inner: set[tuple[int, int]] = set()
        for number, index in states:
            pattern = self.patterns[number]
            for after in _step(pattern, [index], key):
                if after == len(pattern):
                    hit = True
                else:
                    inner.add((number, after))
        found = (hit, frozenset(inner))
        if len(self._moves) >= _MOVES_KEPT:
            self._moves.clear()
        self._moves[(states, key)] = found
        return found


def _is_glob(segment: str) -> bool:
    return any(char in segment for char in "*?[")


def _matcher(segment: str) -> Matcher:
    if not _is_glob(segment):
        return segment.__eq__
    return re.compile(translate(segment)).match  # type: ignore[return-value]


def path_problem(path: Any) -> str | None:
    """Why ``path`` cannot be used, or None."""
    if not isinstance(path, str) or not path.strip():
        return "a path must be a non-empty string"
    segments = path.split(".")
    if any(not segment for segment in segments):
        return f"{path!r} has an empty segment (two dots, or a dot at an end)"
    if any(ANY_DEPTH in s and s != ANY_DEPTH for s in segments):
        return f"{path!r}: ** must be a segment of its own"
    head = _matcher(segments[0])
    if segments[0] != ANY_DEPTH and not any(head(root) for root in ROOTS):
        return f"{path!r} must start with one of: {', '.join(ROOTS)} (or a glob matching one)"
    return None


def compile_paths(paths: Iterable[str]) -> Rules:
    """Rules for ``paths``; :class:`PathError` names the first that cannot be used."""
    patterns: list[Pattern] = []
    literals: list[tuple[str | None, ...]] = []
    starts: dict[str, set[tuple[int, int]]] = {}
    whole: set[str] = set()
    for path in paths:
        problem = path_problem(path)
        if problem:
            raise PathError(problem)
        segments = path.split(".")
        pattern: Pattern = tuple(None if s == ANY_DEPTH else _matcher(s) for s in segments)
        number = len(patterns)
        patterns.append(pattern)
        literals.append(tuple(None if s == ANY_DEPTH or _is_glob(s) else s for s in segments))
        for root in ROOTS:
            for index in _step(pattern, _closure(pattern, 0), root):
                if index == len(pattern):
                    whole.add(root)
                else:
                    starts.setdefault(root, set()).add((number, index))
    return Rules(
        tuple(patterns),
        tuple(literals),
        {root: frozenset(found) for root, found in starts.items() if root not in whole},
        frozenset(whole),
        frozenset(starts) | frozenset(whole),
    )


def _closure(pattern: Pattern, index: int) -> list[int]:
    """``index`` and the indexes a ``**`` there lets the walk skip to (it may match nothing)."""
    found = [index]
    while index < len(pattern) and pattern[index] is None:
        index += 1
        found.append(index)
    return found


def _step(pattern: Pattern, indexes: list[int], key: str) -> list[int]:
    """Where the walk stands in ``pattern`` after going into ``key`` from ``indexes``."""
    after: list[int] = []
    for index in indexes:
        if index == len(pattern):
            continue
        matcher = pattern[index]
        if matcher is None:
            after.extend(_closure(pattern, index))  # ** takes the key and may take more
        elif matcher(key):
            after.extend(_closure(pattern, index + 1))
    return after


def mask(value: Any, rules: Rules, states: States) -> tuple[Any, int]:
    """``value`` with what ``states`` reach replaced by MARKER (dicts and lists are changed in
    place), and how many values were masked."""
    if isinstance(value, dict):
        only = rules.only_keys(states)
        items: Iterable[tuple[Any, Any]] = (
            value.items()  # only values change while it is walked: safe
            if only is None
            else [(key, value[key]) for key in only if key in value]
        )
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return value, 0
    masked = 0
    move = rules.move
    for key, child in items:
        hit, inner = move(states, key if isinstance(key, str) else str(key))
        if hit:
            value[key] = MARKER
            masked += 1
        elif inner and isinstance(child, (dict, list)):
            value[key], count = mask(child, rules, inner)
            masked += count
    return value, masked


def redact_job(job: dict[str, Any], rules: Rules) -> None:
    """Mask a decoded job hash (``queues.job_fields.job_from_hash``) in place; the masked
    fields are named in ``job["redacted"]``.

    Text that is not JSON stays as it is: no path can reach into it. A field the reader cut
    short cannot be parsed: it keeps its first top-level fields up to the first one a path
    could enter, then the marker. JSON nested too deeply to show is masked whole. A dead
    letter's envelope (data holding ``queue``, ``jobId`` and the original ``data``) has the
    original's data and options masked by the same paths."""
    redacted: list[str] = []
    cut = job.get("truncated") or {}
    invalid = job.get("invalid") or ()
    for root in rules.roots:
        value = job.get(root)
        if value is None:
            continue
        if root in rules.whole or (root in invalid and _too_deep(value)):
            job[root] = MARKER
        elif root in cut:
            states = rules.starts[root]
            kept = _cut_prefix(value, rules, states, _ENVELOPE_KEYS if root == "data" else ())
            if kept == value:
                continue
            job[root] = kept + MARKER
        elif root in invalid:
            continue
        else:
            job[root], count = mask(value, rules, rules.starts[root])
            if root == "data" and _is_envelope(value):
                count += _mask_envelope(value, rules)
            if not count:
                continue
        redacted.append(root)
    if redacted:
        job["redacted"] = sorted(redacted)


def _too_deep(value: Any) -> bool:
    return isinstance(value, str) and depth(value) > MAX_DEPTH


# What a dead letter's envelope keeps of the original job, by the root whose paths cover it.
_ENVELOPE_KEYS = ("data", "opts")


def _is_envelope(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("queue"), str)
        and data.get("jobId") not in (None, "")
        and "data" in data
    )


def _mask_envelope(envelope: dict[str, Any], rules: Rules) -> int:
    masked = 0
    for key in _ENVELOPE_KEYS:
        if key not in envelope or key not in rules.roots:
            continue
        if key in rules.whole:
            envelope[key] = MARKER
            masked += 1
        else:
            envelope[key], count = mask(envelope[key], rules, rules.starts[key])
            masked += count
    return masked


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def _cut_prefix(text: Any, rules: Rules, states: States, also: Iterable[str]) -> str:
    """Of JSON text cut short, the part no path can reach into: the object's top-level fields
    before the first whose key a path could enter (or one of ``also``), or the whole text when
    the cut falls inside a field no path enters. Anything but an object keeps nothing."""
    if not isinstance(text, str):
        return ""
    index = _SPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("{", index):
        return ""
    index += 1
    first = True
    while True:
        index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
        before = "" if first else text[:index]  # the fields kept so far
        try:
            key, index = _DECODER.raw_decode(text, index)
        except ValueError:
            return before
        hit, inner = rules.move(states, key) if isinstance(key, str) else (True, states)
        if hit or inner or key in also:
            return before
        index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
        if not text.startswith(":", index):
            return before
        index = _SPACE.match(text, index + 1).end()  # type: ignore[union-attr]
        try:
            _, index = _DECODER.raw_decode(text, index)
        except ValueError:
            return text  # cut inside a value no path reaches into
        index = _SPACE.match(text, index).end()  # type: ignore[union-attr]
        if not text.startswith(",", index):
            return text
        index += 1
        first = False
