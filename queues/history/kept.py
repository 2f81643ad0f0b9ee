"""What a process keeps of history it decoded, by the digest of the stored text.

Every span and summary is written once, whole (``SET NX``), and never changes while its key
lives, and each read of a range's totals (a page, the overview's columns, every alert pass)
reads the same closed ones again: decoding each stored text once is enough. Kept by a digest
of the text itself, so a key written again (a Redis restart, a queue obliterated and used
again) is decoded again, and never read wrong; at most ``limit`` bytes, the least recently
read dropped first.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Kept(Generic[T]):
    def __init__(self, limit: int, size: Callable[[T], int]) -> None:
        self.limit = limit
        self._size = size
        self._values: OrderedDict[bytes, T] = OrderedDict()
        self.used = 0

    def __len__(self) -> int:
        return len(self._values)

    def read(self, raw: str | bytes, load: Callable[[str | bytes], T]) -> T:
        """``load(raw)``, or what it gave for the same text before."""
        data = raw if isinstance(raw, bytes) else raw.encode()
        digest = hashlib.blake2b(data, digest_size=16).digest()
        found = self._values.get(digest)
        if found is not None:
            self._values.move_to_end(digest)
            return found
        value = load(raw)
        self._values[digest] = value
        self.used += self._size(value)
        while self.used > self.limit and self._values:
            _, dropped = self._values.popitem(last=False)
            self.used -= self._size(dropped)
        return value

    def forget(self) -> None:
        self._values.clear()
        self.used = 0
