"""Busy spans' sketches are stored dense: read back the same as the sparse form, and a range's
totals add them up the same, whichever form each span was stored in."""

from __future__ import annotations

import base64
import json
import random
import zlib

import pytest

from queues.history import packed
from queues.history import sketch as sketch_module
from queues.history.packed import loads_total, pack_sketch, unpack_sketch
from queues.history.record import (
    ONLY_TOTAL,
    TOTAL,
    NameRecord,
    by_name,
    dumps_span,
    loads_span,
    merged,
)
from queues.history.record import whole as whole_record
from queues.history.sketch import DENSE_FROM, Sketch, is_dense

pytestmark = pytest.mark.unit


def wide(seed: int, count: int = 5000) -> Sketch:
    rand = random.Random(seed)
    sketch = Sketch.of(round(rand.lognormvariate(4, 1.2)) for _ in range(count))
    sketch.add(0, times=3)
    return sketch


def test_many_buckets_are_stored_dense_and_read_back_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    busy, quiet = wide(1), Sketch.of([1, 5, 5, 900])
    assert len(busy.buckets) >= DENSE_FROM and is_dense(busy.dumps())
    assert not is_dense(quiet.dumps())
    dense_text = busy.dumps()
    # The sparse form, as every sketch was stored before dense ones.
    monkeypatch.setattr(sketch_module, "DENSE_FROM", 10**9)
    sparse = busy.dumps()
    monkeypatch.undo()
    assert busy.dumps() == dense_text and not is_dense(sparse)
    for sketch in (busy, quiet):
        text = sketch.dumps()
        assert Sketch.loads(text) == sketch
        assert unpack_sketch(pack_sketch(text)) == sketch
    # The same sketch packs the same from either form: spans stored before still add up.
    assert pack_sketch(busy.dumps()) == pack_sketch(sparse)
    assert Sketch.loads(sparse) == busy
    # Dense costs about the memory of sparse once compressed.
    assert len(busy.dumps()) < 1.3 * len(sparse)


def test_a_dense_text_that_is_not_one_is_refused() -> None:
    def dense(raw: bytes) -> str:
        return "." + base64.urlsafe_b64encode(zlib.compress(raw)).decode().rstrip("=")

    too_high = (2000).to_bytes(2, "little") + bytes(4) + (1).to_bytes(8, "little")
    for text in (".", ".////", dense(b""), dense(bytes(6)), dense(bytes(13)), dense(too_high)):
        with pytest.raises(ValueError):
            Sketch.loads(text)
        with pytest.raises(ValueError):
            pack_sketch(text)


def test_counts_past_32_bits_are_refused_when_stored() -> None:
    sketch = wide(2)
    sketch.buckets[max(sketch.buckets)] = 2**32
    with pytest.raises(OverflowError):
        sketch.dumps()


def test_totals_read_the_queue_record_alone_as_spans_do() -> None:
    packed.forget()
    names = {
        "send": NameRecord(completed=7, failed=1, wait=wide(3), run=wide(4, 300)),
        # A name that looks like the queue's record's key inside a string is not it.
        'x"\\u0000queue": [': NameRecord(completed=2, run=Sketch.of([3])),
    }
    raw = dumps_span(names)
    expected = whole_record(loads_span(raw, ONLY_TOTAL))
    total = packed.unpacked(loads_total(raw))
    assert (total.completed, total.failed) == (9, 1) == (expected.completed, expected.failed)
    assert total.wait == expected.wait and total.run == expected.run
    # Its record stored first (a span written with it) reads the same.
    stored = json.loads(raw)
    first = json.dumps({TOTAL: stored[TOTAL], **stored}, separators=(",", ":"))
    assert loads_total(first) == loads_total(raw)


def test_names_add_up_packed_as_spans_merge() -> None:
    packed.forget()
    raws = [
        dumps_span(
            {
                "send": NameRecord(completed=seed, failed=1, wait=wide(seed), run=wide(seed + 50)),
                f"only-{seed % 2}": NameRecord(completed=2, stalled=1, run=Sketch.of([seed, 7])),
            }
        )
        for seed in range(1, 8)
    ]
    raws.append(json.dumps({"send": [1, 0, 0, 0, 0, 0, "not a sketch", ""]}))  # read as nothing
    expected = by_name(merged([loads_span(raw) for raw in raws]))
    found = packed.added_names([packed.loads_names(raw) for raw in raws])
    assert sorted(found) == sorted(expected) == ["only-0", "only-1", "send"]
    for name, record in expected.items():
        total = packed.unpacked(found[name])
        assert total.wait == record.wait and total.run == record.run
        assert (total.completed, total.failed, total.stalled) == (
            record.completed,
            record.failed,
            record.stalled,
        )
    assert packed.loads_names(None) == {} and packed.loads_names("[1]") == {}
    # Kept by its text: read again, the same; dropped on forget.
    assert packed.loads_names(raws[0]) == packed.loads_names(raws[0].encode())
    packed.forget()
    assert len(packed.NAMES_KEPT) == 0
