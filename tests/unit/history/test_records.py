"""Span records: exact addition, the slowest runs kept, stored form read back."""

from __future__ import annotations

from queues.history.record import (
    ONLY_TOTAL,
    TOTAL,
    NameRecord,
    by_name,
    dumps_span,
    loads_span,
    merged,
    whole,
)
from queues.history.sketch import Sketch


def record(
    completed: int, failed: int, runs: list[float], slow: list[tuple[str, float]]
) -> NameRecord:
    return NameRecord(
        completed=completed,
        failed=failed,
        run=Sketch.of(runs),
        wait=Sketch.of([1, 2]),
        slowest=slow,
    )


def test_spans_add_exactly_and_keep_the_slowest() -> None:
    a = {"send": record(3, 1, [10, 20, 30], [("1", 30), ("2", 20), ("3", 10)])}
    b = {"send": record(2, 0, [500, 5], [("9", 500)]), "resize": record(1, 1, [7], [("4", 7)])}
    total = merged([a, b])
    assert (total["send"].completed, total["send"].failed) == (5, 1)
    assert total["send"].run == Sketch.of([10, 20, 30, 500, 5])
    assert total["send"].slowest == [("9", 500), ("1", 30), ("2", 20)]
    queue = whole(total)
    assert (queue.completed, queue.failed) == (6, 2)
    assert queue.run.count == 6


def test_stored_form_round_trips_and_bad_data_reads_as_empty() -> None:
    span = {"send": record(3, 1, [10, 20], [("1", 20)]), "(other)": NameRecord(stalled=2)}
    again = loads_span(dumps_span(span))
    assert by_name(again) == span
    # The queue's record is stored beside the names', and read alone when asked.
    assert whole(again) == whole(span) and whole(again).stalled == 2
    assert loads_span(dumps_span(span), ONLY_TOTAL) == {TOTAL: whole(span)}
    assert loads_span(None) == {}
    assert loads_span("not json") == {}
    assert loads_span('{"x": [1]}') == {}
