"""A span's queue record packed for adding many at once: what a range's totals read.

A range's totals add up to 90 days' (or 60 minutes') records of a queue, and the overview and
the alert rules add up those of thousands of queues. Merging sketches as dicts costs Python a
step per bucket and span; here each sketch's buckets are one Python integer, bucket ``i`` the
64-bit field at bit ``64 * i``, so adding two sketches is one integer addition, done in C
(exact: a stored bucket counts at most 2**32 - 1 durations, so 2**32 spans add up without a
field overflowing into the next). Only the queue's counts and sketches are kept: no job names,
no slowest runs.
"""

from __future__ import annotations

import json
import sys
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from queues.history.kept import Kept
from queues.history.record import TOTAL, NameRecord
from queues.history.sketch import Sketch, decode, decode_dense, is_dense, value_of

_WIDTH = 64

# A packed sketch: its zero count and its buckets.
PackedSketch = tuple[int, int]


@dataclass(frozen=True)
class PackedRecord:
    # completed, failed, retried, stalled, unmeasured, negative
    counts: tuple[int, int, int, int, int, int] = (0, 0, 0, 0, 0, 0)
    wait: PackedSketch = (0, 0)
    run: PackedSketch = (0, 0)


EMPTY = PackedRecord()


def pack_sketch(text: str) -> PackedSketch:
    """A stored sketch (:meth:`Sketch.dumps`) packed; ValueError when it is not one."""
    if not text:
        return (0, 0)
    if is_dense(text):  # already 64-bit fields from its lowest bucket on: no step per bucket
        zero, low, raw = decode_dense(text)
        return (zero, int.from_bytes(raw, "little") << (_WIDTH * low))
    zero, indexes, counts = decode(text)
    if not indexes:
        return (zero, 0)
    low = indexes[0]
    if indexes[-1] - low + 1 == len(indexes):  # no empty bucket between: already dense
        dense = array("Q", counts)
    else:
        dense = array("Q", bytes(8 * (indexes[-1] - low + 1)))
        for index, count in zip(indexes, counts, strict=True):
            dense[index - low] = count
    if sys.byteorder != "little":
        dense.byteswap()
    return (zero, int.from_bytes(dense.tobytes(), "little") << (_WIDTH * low))


def unpack_sketch(packed: PackedSketch) -> Sketch:
    zero, buckets = packed
    sketch = Sketch()
    sketch.zero = zero
    if buckets:
        dense = array("Q")
        dense.frombytes(buckets.to_bytes(-(-buckets.bit_length() // _WIDTH) * 8, "little"))
        if sys.byteorder != "little":
            dense.byteswap()
        sketch.buckets = {index: count for index, count in enumerate(dense) if count}
    return sketch


def quantiles_of(packed: PackedSketch, qs: Sequence[float]) -> list[float | None]:
    """``unpack_sketch(packed).quantiles(qs)``, without unpacking: the buckets' running counts
    added up in C and each rank found by bisection (the same ranks compared the same way, so
    the same values)."""
    zero, buckets = packed
    if not buckets:
        return [None if zero == 0 else 0.0 for _ in qs]
    dense = array("Q")
    dense.frombytes(buckets.to_bytes(-(-buckets.bit_length() // _WIDTH) * 8, "little"))
    if sys.byteorder != "little":
        dense.byteswap()
    running = list(accumulate(dense))
    total = zero + running[-1]
    found: list[float | None] = []
    for q in qs:
        rank = q * (total - 1)
        if zero > rank:
            found.append(0.0)
            continue
        # The first bucket whose count, with the ones below it, passes the rank.
        index = bisect_right(running, rank, key=lambda seen: zero + seen)
        found.append(value_of(min(index, len(running) - 1)))
    return found


def loads_total(raw: str | bytes | None) -> PackedRecord:
    """The queue's record of a stored span (record.py), or stored alone (``dumps_total``),
    packed; empty for a missing key, one that cannot be read or one without the queue's
    record, as ``loads_span(raw, ONLY_TOTAL)`` reads them. Each stored text is decoded once
    in a process (kept.py)."""
    if not raw:
        return EMPTY
    return KEPT.read(raw, _read_total)


def forget() -> None:
    """Drops every kept record (a benchmark's cold read)."""
    KEPT.forget()
    NAMES_KEPT.forget()


def _size(record: PackedRecord) -> int:
    """About what a kept record takes: its two integers' digits, its objects and its digest."""
    return (record.wait[1].bit_length() + record.run[1].bit_length()) // 8 + 400


# The packed records a process keeps: at most 64 MB, some 20,000 minutes of widely spread
# durations (about 3 KB each) or the 90 closed days of 50 queues (about 14 KB a day).
KEPT: Kept[PackedRecord] = Kept(64 * 1024 * 1024, _size)


# The queue's record's key as json.dumps writes it. Only there can it stand before a colon:
# inside a JSON string a quote is escaped, and a job name holds no NUL (record.py).
_TOTAL_KEY = json.dumps(TOTAL) + ":"
_DECODER = json.JSONDecoder()


def _total_part(text: str) -> object:
    """The queue's record of a stored span, parsed alone: a day's names' records are most of
    its text and a range's totals do not read them."""
    at = text.rfind(_TOTAL_KEY)
    if at < 0 or not text.startswith("{"):
        return None
    value, _ = _DECODER.raw_decode(text, at + len(_TOTAL_KEY))
    return value


def _record_of(value: object) -> PackedRecord:
    """A stored record packed; ValueError or TypeError where record.py refuses it too."""
    if not isinstance(value, list) or len(value) < 8:
        raise ValueError("not a history record")
    a, b, c, d, e, f = (int(count) for count in value[:6])
    # Read as record.py reads them, so that a record it refuses is refused here too.
    for pair in value[8] if len(value) > 8 and isinstance(value[8], list) else []:
        if len(pair) == 2:
            float(pair[1])
    return PackedRecord((a, b, c, d, e, f), pack_sketch(str(value[6])), pack_sketch(str(value[7])))


def _checked(value: object) -> None:
    """ValueError or TypeError where record.py refuses a record, without packing it."""
    if not isinstance(value, list) or len(value) < 8:
        raise ValueError("not a history record")
    for count in value[:6]:
        int(count)
    for pair in value[8] if len(value) > 8 and isinstance(value[8], list) else []:
        if len(pair) == 2:
            float(pair[1])


def _read_total(raw: str | bytes) -> PackedRecord:
    try:
        text = raw.decode() if isinstance(raw, bytes) else raw
        value = json.loads(text) if text.startswith("[") else _total_part(text)
        return EMPTY if value is None else _record_of(value)
    except (ValueError, TypeError):
        return EMPTY


# A span's job names' records, packed.
PackedSpan = dict[str, PackedRecord]


def loads_names(raw: str | bytes | None) -> PackedSpan:
    """Each job name's record of a stored span, packed (the queue's own left out): what a
    names' table adds up over a range. Empty where ``loads_span(raw)`` reads nothing. Each
    stored text is decoded once in a process, as :func:`loads_total`'s are."""
    if not raw:
        return {}
    return NAMES_KEPT.read(raw, _read_names)


def _read_names(raw: str | bytes) -> PackedSpan:
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            return {}
        # The queue's record is left out: its shape and counts checked (a span whose record
        # is broken reads as nothing, as loads_span's does), its sketches not decoded (a
        # sixth of a day's, and written with the names' they add up).
        if TOTAL in data:
            _checked(data[TOTAL])
        return {str(name): _record_of(value) for name, value in data.items() if name != TOTAL}
    except (ValueError, TypeError):
        return {}


# The names' packed records a process keeps: at most 32 MB, the 90 closed days of some 15
# queues of 5 widely spread names (about 22 KB a day).
NAMES_KEPT: Kept[PackedSpan] = Kept(
    32 * 1024 * 1024, lambda span: 100 + sum(_size(record) for record in span.values())
)


def added_names(spans: list[PackedSpan]) -> PackedSpan:
    """Each name's records added up over ``spans``."""
    each: dict[str, list[PackedRecord]] = {}
    for span in spans:
        for name, record in span.items():
            each.setdefault(name, []).append(record)
    return {name: added(records) for name, records in each.items()}


def added(records: list[PackedRecord]) -> PackedRecord:
    """The records added up: counts and buckets."""
    if not records:
        return EMPTY
    if len(records) == 1:
        return records[0]
    columns = zip(*(record.counts for record in records), strict=True)
    a, b, c, d, e, f = (sum(column) for column in columns)
    return PackedRecord(
        (a, b, c, d, e, f),
        (sum(r.wait[0] for r in records), sum(r.wait[1] for r in records)),
        (sum(r.run[0] for r in records), sum(r.run[1] for r in records)),
    )


def slid(
    before: Sequence[PackedRecord], total: PackedRecord, records: Sequence[PackedRecord]
) -> PackedRecord:
    """``added(records)``, where ``total`` is ``added(before)`` and ``records`` may be
    ``before`` moved on (a window a minute later: its oldest records gone, newer ones after
    the rest, the same objects): then the records gone are taken away and the new ones added,
    not every record again. Exact: integers, and only what was added is taken away."""
    for gone in range(1, min(len(before), 4)):
        stay = len(before) - gone
        if stay <= len(records) and all(
            a is b for a, b in zip(before[gone:], records[:stay], strict=True)
        ):
            out = added([total, *records[stay:]])
            left = added(list(before[:gone]))
            a, b, c, d, e, f = (x - y for x, y in zip(out.counts, left.counts, strict=True))
            return PackedRecord(
                (a, b, c, d, e, f),
                (out.wait[0] - left.wait[0], out.wait[1] - left.wait[1]),
                (out.run[0] - left.run[0], out.run[1] - left.run[1]),
            )
    return added(list(records))


def unpacked(record: PackedRecord) -> NameRecord:
    """The record as record.py's (without slowest runs)."""
    completed, failed, retried, stalled, unmeasured, negative = record.counts
    return NameRecord(
        completed,
        failed,
        retried,
        stalled,
        unmeasured,
        negative,
        wait=unpack_sketch(record.wait),
        run=unpack_sketch(record.run),
    )
