"""Which queues a typed text names, best first: the "Go to queue" box's suggestions and where
its Enter leads.

Matching ignores case and looks at a queue's URL name, its bare name and its display name;
an exact match ranks before a prefix, a prefix before a substring. The index is built once per
queue list, so a keystroke costs one substring test per queue.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

EXACT, PREFIX, SUBSTRING = 0, 1, 2
# Between a queue's keys in its haystack. Text holding it is not looked for (no one types a
# line break into the box); any other text is in the haystack only if it is in one key.
_JOIN = "\n"
_LAST = 0x10FFFF  # the highest code point


@dataclass(frozen=True, slots=True)
class Match:
    slug: str
    display_name: str
    rank: int


@dataclass(frozen=True, slots=True)
class _Entry:
    slug: str
    display_name: str
    keys: tuple[str, ...]  # case-folded, distinct
    haystack: str  # the keys joined: one ``in`` rules out most queues at C speed


def normalise(text: str) -> str:
    return text.strip().casefold()


def _after_prefix(prefix: str) -> str | None:
    """The least text above every text beginning with ``prefix`` (None: there is none)."""
    for at in range(len(prefix) - 1, -1, -1):
        if ord(prefix[at]) < _LAST:
            return prefix[:at] + chr(ord(prefix[at]) + 1)
    return None


class QueueIndex:
    """The queues one can go to: ``(url name, bare name, display name)`` each.

    Entries are kept in the order suggestions list them within a rank (shorter names first,
    then by name), so the best of a rank are those with the lowest places.
    """

    def __init__(self, queues: Iterable[tuple[str, str, str]]) -> None:
        entries = []
        for slug, name, display_name in queues:
            keys = tuple(dict.fromkeys(normalise(key) for key in (slug, name, display_name)))
            entries.append(_Entry(slug, display_name, keys, _JOIN.join(keys)))
        entries.sort(key=lambda entry: (len(entry.slug), entry.slug.casefold(), entry.slug))
        self._entries = tuple(entries)
        self._slugs = frozenset(entry.slug for entry in entries)
        self._exact: dict[str, list[int]] = {}
        for at, entry in enumerate(entries):
            for key in entry.keys:
                self._exact.setdefault(key, []).append(at)
        # Every key in sorted order with its entry's place: the keys a text begins are a range.
        by_key = sorted((key, at) for at, entry in enumerate(entries) for key in entry.keys)
        self._keys = [key for key, _ in by_key]
        self._key_places = [at for _, at in by_key]

    def __len__(self) -> int:
        return len(self._entries)

    def _matching(self, needle: str) -> list[int]:
        if not needle or _JOIN in needle:
            return []
        return [at for at, entry in enumerate(self._entries) if needle in entry.haystack]

    def _starting(self, needle: str) -> set[int]:
        low = bisect.bisect_left(self._keys, needle)
        after = _after_prefix(needle)
        high = len(self._keys) if after is None else bisect.bisect_left(self._keys, after, low)
        return set(self._key_places[low:high])

    def best(self, text: str, limit: int) -> tuple[list[Match], int]:
        """The ``limit`` best matches of ``text``, and how many queues match in all."""
        needle = normalise(text)
        found = self._matching(needle)
        if not found:
            return [], 0
        exact = self._exact.get(needle, [])
        starting = self._starting(needle).difference(exact)
        prefix = heapq.nsmallest(limit, starting)
        places = [(EXACT, at) for at in exact[:limit]] + [(PREFIX, at) for at in prefix]
        if len(places) < limit:
            taken = starting.union(exact)
            rest = (at for at in found if at not in taken)
            places += [(SUBSTRING, at) for at in itertools.islice(rest, limit - len(places))]
        chosen = [(rank, self._entries[at]) for rank, at in places[:limit]]
        return [Match(e.slug, e.display_name, rank) for rank, e in chosen], len(found)

    def destination(self, text: str) -> str | None:
        """The one queue ``text`` names: its URL name exactly, else the only case-insensitive
        exact match, else the only match of any kind; None when it names none or several."""
        typed = text.strip()
        if typed in self._slugs:
            return typed
        needle = normalise(typed)
        found = self._matching(needle)
        exact = self._exact.get(needle, []) if found else []
        if exact:
            return self._entries[exact[0]].slug if len(exact) == 1 else None
        return self._entries[found[0]].slug if len(found) == 1 else None
