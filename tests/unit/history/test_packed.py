"""Packed records (what range totals add up) read and add exactly as record.py's spans do."""

from __future__ import annotations

import json
import random

import pytest

from queues.history import packed
from queues.history.packed import (
    EMPTY,
    added,
    loads_total,
    pack_sketch,
    unpack_sketch,
    unpacked,
)
from queues.history.record import (
    ONLY_TOTAL,
    TOTAL,
    NameRecord,
    dumps_span,
    dumps_total,
    loads_span,
    merged,
)
from queues.history.record import whole as whole_record
from queues.history.sketch import MAX_MS, Sketch


def spread(seed: int, count: int) -> Sketch:
    rand = random.Random(seed)
    values = [rand.lognormvariate(4, 2) for _ in range(count)] + [0, 0.5, MAX_MS * 10]
    return Sketch.of(values)


def span(seed: int) -> dict[str, NameRecord]:
    return {
        name: NameRecord(
            completed=seed + index,
            failed=index,
            stalled=seed % 3,
            wait=spread(seed * 10 + index, 200),
            run=spread(seed * 20 + index, 50 + seed),
            slowest=[(f"{seed}-{index}", 10.0 * seed)],
        )
        for index, name in enumerate(("send", "resize"))
    }


def test_a_sketch_packs_and_unpacks_to_itself() -> None:
    for sketch in (Sketch(), Sketch.of([0, 0]), Sketch.of([1]), spread(1, 5000)):
        assert unpack_sketch(pack_sketch(sketch.dumps())) == sketch
    assert pack_sketch("") == (0, 0)


def test_packed_records_add_as_spans_merge() -> None:
    raws = [dumps_span(span(seed)) for seed in range(1, 40)]
    expected = whole_record(merged([loads_span(raw, ONLY_TOTAL) for raw in raws]))
    total = unpacked(added([loads_total(raw) for raw in raws]))
    assert total.wait == expected.wait and total.run == expected.run
    assert (total.completed, total.failed, total.stalled) == (
        expected.completed,
        expected.failed,
        expected.stalled,
    )
    assert total.wait.quantiles((0.5, 0.95, 0.99)) == expected.wait.quantiles((0.5, 0.95, 0.99))
    assert added([]) == EMPTY and unpacked(EMPTY) == NameRecord()


def test_what_spans_cannot_read_is_empty_packed_too() -> None:
    good = json.loads(dumps_span(span(3)))
    bad_sketch = {TOTAL: [*good[TOTAL][:6], "not a sketch", good[TOTAL][7]]}
    bad_slowest = {TOTAL: [*good[TOTAL][:8], [["job", "slow"]]]}
    names_only = {"send": good["send"]}
    for raw in (None, "", "[1]", "nonsense", json.dumps(bad_sketch), json.dumps(bad_slowest)):
        assert whole_record(loads_span(raw, ONLY_TOTAL)) == NameRecord()
        assert loads_total(raw) == EMPTY
    assert loads_total(json.dumps(names_only)) == EMPTY
    assert loads_span(json.dumps(names_only), ONLY_TOTAL) == {}


def test_kept_records_are_bounded_and_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    packed.forget()
    monkeypatch.setattr(packed.KEPT, "limit", 100_000)
    raws = [dumps_span(span(seed)) for seed in range(1, 30)]
    first = [loads_total(raw) for raw in raws]
    assert 0 < packed.KEPT.used <= 100_000 and 0 < len(packed.KEPT) < len(raws)
    # Read again: the kept ones and the dropped ones alike, as when first read.
    assert [loads_total(raw) for raw in reversed(raws)] == first[::-1]
    assert loads_total(raws[0].encode()) == first[0]
    packed.forget()
    assert len(packed.KEPT) == 0 and packed.KEPT.used == 0


def test_a_record_stored_alone_reads_as_the_spans_own() -> None:
    for seed in range(1, 12):
        made = span(seed)
        alone, whole = dumps_total(made), dumps_span(made)
        assert len(alone) < len(whole)
        assert loads_total(alone) == loads_total(whole) != EMPTY
    assert loads_total(dumps_total({})) == loads_total(dumps_span({})) == EMPTY
    good = json.loads(dumps_total(span(3)))
    for bad in ([*good[:6], "not a sketch", good[7]], [*good[:8], [["job", "slow"]]], good[:5]):
        assert loads_total(json.dumps(bad)) == EMPTY


def test_quantiles_of_a_packed_sketch_are_the_sketchs_own() -> None:
    qs = (0.0, 0.05, 0.5, 0.95, 0.99, 1.0)
    sketches = [Sketch(), Sketch.of([0, 0]), Sketch.of([1]), Sketch.of([0, 5000.0])]
    sketches += [spread(seed, count) for seed in range(30) for count in (1, 7, 120, 3000)]
    for sketch in sketches:
        packed_sketch = pack_sketch(sketch.dumps())
        assert packed.quantiles_of(packed_sketch, qs) == sketch.quantiles(qs)
        assert packed.quantiles_of(packed_sketch, (0.95,)) == sketch.quantiles((0.95,))
    # Added up packed, as a window's minutes are.
    raws = [dumps_span(span(seed)) for seed in range(1, 16)]
    total = added([loads_total(raw) for raw in raws])
    assert packed.quantiles_of(total.run, qs) == unpacked(total).run.quantiles(qs)


def test_a_window_moved_on_adds_up_from_its_sum_before_as_anew() -> None:
    rand = random.Random(5)
    pool = [loads_total(dumps_span(span(seed))) for seed in range(1, 8)]
    window = [rand.choice(pool) for _ in range(15)]  # the same object again: a repeated text
    total = added(window)
    for _ in range(60):
        step = rand.random()
        if step < 0.6:  # a minute on: the oldest gone, maybe a new one (or the open minute)
            moved = window[1:] + ([rand.choice(pool)] if rand.random() < 0.8 else [])
        elif step < 0.8:  # two or three minutes on
            moved = [*window[rand.choice((2, 3)) :], rand.choice(pool)]
        else:  # anything else: added up anew
            moved = [rand.choice(pool) for _ in range(rand.randint(0, 15))]
        total = packed.slid(window, total, moved)
        assert total == added(moved)
        window = moved
