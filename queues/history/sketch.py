"""A mergeable histogram of durations with bounded relative error (after DDSketch).

A duration ``x`` >= 1 ms is counted in bucket ``ceil(log(x) / log(gamma))`` with
``gamma = (1 + alpha) / (1 - alpha)``; every value of a bucket lies within ``alpha`` of the
bucket's representative value ``2 gamma^i / (gamma + 1)``, so any quantile read back is within
``alpha`` (1 %) of the true value at that rank. Durations below 1 ms (BullMQ's timestamps are
whole milliseconds, so these are 0) have a bucket of their own and read back as 0.

Merging two sketches adds their buckets: the merge of the sketches of two sets of durations is
exactly the sketch of their union, which is what lets minutes roll up into hours and days, and
job names into their queue, without keeping a single raw duration. Durations are clamped to
``MAX_MS`` (about three years), so a sketch never holds more than ``MAX_BUCKETS`` buckets.

Serialised compactly and quick to read back, zlib-compressed, in URL-safe base64: a sketch of
few buckets (a quiet minute) as its bucket indexes' gaps (16 bits each, mostly 1), the zero
count and bucket counts (32 bits each); one of ``DENSE_FROM`` buckets or more (a busy hour or
day, whose buckets are mostly all filled between its lowest and highest) as ``.`` then its
lowest index, its zero count and every count from the lowest bucket to the highest (64 bits
each, empty ones too), which a range's totals add up without a Python step per bucket
(packed.py) and which takes about as much memory once compressed.
"""

from __future__ import annotations

import base64
import binascii
import math
import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate, compress

ALPHA = 0.01
GAMMA = (1 + ALPHA) / (1 - ALPHA)
_LOG_GAMMA = math.log(GAMMA)
MAX_MS = 1e11
MAX_INDEX = math.ceil(math.log(MAX_MS) / _LOG_GAMMA)
MAX_BUCKETS = MAX_INDEX + 2  # indexes 0..MAX_INDEX, and the zero bucket
# A sketch of this many buckets or more is stored dense (see above).
DENSE_FROM = 128
_DENSE = "."
# A stored bucket's count fits 32 bits (what packed.py's additions rely on).
MAX_COUNT = 2**32 - 1
# URL-safe base64 to standard: what binascii reads (quicker than base64.urlsafe_b64decode).
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")


def bucket_of(value: float) -> int:
    """The bucket of a duration ≥ 1 ms."""
    return min(MAX_INDEX, max(0, math.ceil(math.log(min(value, MAX_MS)) / _LOG_GAMMA - 1e-12)))


def value_of(index: int) -> float:
    """A bucket's representative value: within ALPHA of every value it counts."""
    return 2 * GAMMA**index / (GAMMA + 1)


class Sketch:
    __slots__ = ("buckets", "zero")

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.zero = 0

    @property
    def count(self) -> int:
        return self.zero + sum(self.buckets.values())

    def __bool__(self) -> bool:
        return self.zero > 0 or bool(self.buckets)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sketch):
            return NotImplemented
        return self.zero == other.zero and self.buckets == other.buckets

    def add(self, value: float, times: int = 1) -> None:
        """Count a duration (ms; negative durations are the caller's to drop)."""
        if value < 1:
            self.zero += times
            return
        index = bucket_of(value)
        self.buckets[index] = self.buckets.get(index, 0) + times

    def merge(self, other: Sketch) -> None:
        self.zero += other.zero
        mine = self.buckets
        if not mine:
            mine.update(other.buckets)
            return
        # One update from a comprehension: much quicker than a store per bucket.
        get = mine.get
        mine.update({index: get(index, 0) + times for index, times in other.buckets.items()})

    def copy(self) -> Sketch:
        twin = Sketch()
        twin.merge(self)
        return twin

    def quantile(self, q: float) -> float | None:
        """The duration at rank ``q * (count - 1)`` (the lower one), within ALPHA; None when
        empty."""
        total = self.count
        if total == 0:
            return None
        rank = q * (total - 1)
        seen = self.zero
        if seen > rank:
            return 0.0
        for index in sorted(self.buckets):
            seen += self.buckets[index]
            if seen > rank:
                return value_of(index)
        return value_of(max(self.buckets))

    def quantiles(self, qs: Iterable[float]) -> list[float | None]:
        """:meth:`quantile` of each of ``qs`` (ascending), in one walk of the buckets."""
        wanted = list(qs)
        total = self.count
        if total == 0:
            return [None for _ in wanted]
        found: list[float | None] = []
        ranks = iter(q * (total - 1) for q in wanted)
        rank = next(ranks, None)
        seen = self.zero
        while rank is not None and seen > rank:
            found.append(0.0)
            rank = next(ranks, None)
        for index in sorted(self.buckets):
            seen += self.buckets[index]
            while rank is not None and seen > rank:
                found.append(value_of(index))
                rank = next(ranks, None)
        while len(found) < len(wanted):
            found.append(value_of(max(self.buckets)))
        return found

    # ---- serialisation ----------------------------------------------------------------------

    def dumps(self) -> str:
        indexes = sorted(self.buckets)
        if len(indexes) >= DENSE_FROM:
            return _dumps_dense(self.zero, indexes, self.buckets)
        gaps = array("H", (b - a for a, b in zip([-1, *indexes], indexes, strict=False)))
        counts = array("I", [self.zero, *(self.buckets[i] for i in indexes)])
        if sys.byteorder != "little":
            gaps.byteswap()
            counts.byteswap()
        raw = len(indexes).to_bytes(4, "little") + gaps.tobytes() + counts.tobytes()
        return base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")

    @classmethod
    def loads(cls, text: str) -> Sketch:
        """A sketch from :meth:`dumps`; ValueError when ``text`` is not one."""
        sketch = cls()
        if not text:
            return sketch
        if text.startswith(_DENSE):
            zero, low, raw = decode_dense(text)
            if sys.byteorder == "little":
                dense: Sequence[int] = memoryview(raw).cast("Q")
            else:
                dense = array("Q", raw)
                dense.byteswap()
            sketch.zero = zero
            # The filled buckets alone, picked in C (no Python step per bucket).
            filled = compress(range(low, low + len(dense)), dense)
            sketch.buckets = dict(zip(filled, compress(dense, dense), strict=False))
            return sketch
        zero, indexes, counts = decode(text)
        sketch.zero = zero
        sketch.buckets = dict(zip(indexes, counts, strict=True))
        return sketch

    @classmethod
    def of(cls, values: Iterable[float]) -> Sketch:
        sketch = cls()
        for value in values:
            sketch.add(value)
        return sketch


def _dumps_dense(zero: int, indexes: list[int], buckets: dict[int, int]) -> str:
    low = indexes[0]
    dense = array("Q", bytes(8 * (indexes[-1] - low + 1)))
    for index in indexes:
        dense[index - low] = buckets[index]
    if zero > MAX_COUNT or max(dense) > MAX_COUNT:
        raise OverflowError("a bucket counts more than 32 bits hold")
    if sys.byteorder != "little":
        dense.byteswap()
    raw = low.to_bytes(2, "little") + zero.to_bytes(4, "little") + dense.tobytes()
    return _DENSE + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")


def _inflate(text: str) -> bytes:
    encoded = text.encode("ascii").translate(_FROM_URLSAFE) + b"=" * (-len(text) % 4)
    return zlib.decompress(binascii.a2b_base64(encoded))


def is_dense(text: str) -> bool:
    return text.startswith(_DENSE)


def decode_dense(text: str) -> tuple[int, int, bytes]:
    """The zero count, the lowest bucket's index and every count from it on (64 bits each,
    little-endian) of a dense :meth:`Sketch.dumps`; ValueError when ``text`` is not one."""
    try:
        raw = _inflate(text[len(_DENSE) :])
    except (ValueError, TypeError, binascii.Error, zlib.error) as error:
        raise ValueError("not a sketch") from error
    low, size = int.from_bytes(raw[:2], "little"), (len(raw) - 6) // 8
    if len(raw) < 14 or (len(raw) - 6) % 8 or low + size - 1 > MAX_INDEX:
        raise ValueError("not a sketch")
    return int.from_bytes(raw[2:6], "little"), low, raw[6:]


def decode(text: str) -> tuple[int, list[int], array[int]]:
    """The zero count, the bucket indexes (ascending) and their counts of a non-empty
    sparse :meth:`Sketch.dumps`; ValueError when ``text`` is not one."""
    try:
        raw = _inflate(text)
        size = int.from_bytes(raw[:4], "little")
        gaps, counts = array("H"), array("I")
        gaps.frombytes(raw[4 : 4 + 2 * size])
        counts.frombytes(raw[4 + 2 * size :])
    except (ValueError, TypeError, binascii.Error, zlib.error) as error:
        raise ValueError("not a sketch") from error
    if sys.byteorder != "little":
        gaps.byteswap()
        counts.byteswap()
    if len(gaps) != size or len(counts) != size + 1:
        raise ValueError("not a sketch")
    indexes = list(accumulate(gaps, initial=-1))[1:]
    if size and (min(gaps) < 1 or indexes[-1] > MAX_INDEX):
        raise ValueError("not a sketch")
    zero = counts.pop(0)
    return zero, indexes, counts
