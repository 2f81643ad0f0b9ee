"""Span summaries (counts and the queue's percentiles, no sketch) and the spans whose sketches
make up a range's totals."""

from __future__ import annotations

import pytest

from queues.history.model import Percentiles
from queues.history.record import NameRecord
from queues.history.sketch import Sketch
from queues.history.spans import cover
from queues.history.storage import DAY_MS, HOUR_MS, MINUTE_MS
from queues.history.summary import dumps_summary, loads_summary, percentiles, summarize

pytestmark = pytest.mark.unit


def test_a_summary_keeps_counts_slowest_runs_and_the_queues_percentiles() -> None:
    runs = [float(v) for v in range(1, 101)]
    span = {
        "send": NameRecord(
            completed=90, failed=10, retried=3, run=Sketch.of(runs), slowest=[("7", 100.0)]
        ),
        "digest": NameRecord(completed=1, stalled=2, unmeasured=1, wait=Sketch.of([40.0])),
    }
    summary = loads_summary(dumps_summary(span))
    assert summary is not None and summary == summarize(span)
    assert summary.counts == (91, 10, 3, 2, 1, 0)
    assert summary.run == percentiles(Sketch.of(runs))
    assert summary.run.p95 == pytest.approx(95, rel=0.02)
    assert summary.wait.p50 == summary.wait.p99 == pytest.approx(40, rel=0.02)
    assert summary.names == {
        "send": ((90, 10, 3, 0, 0, 0), [("7", 100.0)]),
        "digest": ((1, 0, 0, 2, 1, 0), []),
    }
    # Without its names, when only the queue's figures are wanted.
    alone = loads_summary(dumps_summary(span), names=False)
    assert alone is not None and alone.names == {} and alone.counts == summary.counts


def test_an_empty_span_and_bad_data() -> None:
    empty = loads_summary(dumps_summary({}))
    assert empty is not None and empty.counts == (0,) * 6 and empty.run == Percentiles()
    assert loads_summary(None) is None
    assert loads_summary("not json") is None
    assert loads_summary('{"q": [1]}') is None
    assert loads_summary("[1, 2]") is None


def test_a_ranges_sketches_are_the_fewest_spans_and_never_ones_expired() -> None:
    day = 100 * DAY_MS
    now = day + 5 * HOUR_MS + 30 * MINUTE_MS
    # The last hour: minutes only.
    recent = cover(now - 59 * MINUTE_MS, now + MINUTE_MS, now)
    assert recent["d"] == [] and recent["h"] == []
    assert recent["m"] == [now - 59 * MINUTE_MS + m * MINUTE_MS for m in range(60)]
    # 24 h: its first minutes' sketches are gone, so from the start of that hour; whole hours,
    # then the open hour's minutes.
    lo = now - 1439 * MINUTE_MS
    wide = cover(lo, now + MINUTE_MS, now)
    assert wide["d"] == [] and wide["h"][0] == lo - lo % HOUR_MS
    assert wide["h"][-1] == day + 4 * HOUR_MS and len(wide["h"]) == 24
    assert len(wide["m"]) == 31
    # 90 days of days: one span a day, the open one too (made from its hours when read).
    days = cover(day - 89 * DAY_MS, day + DAY_MS, now)
    assert days == {"d": [day - b * DAY_MS for b in range(89, -1, -1)], "h": [], "m": []}
    # 7 days by the hour: whole days from the start of the first one, then today's hours.
    lo = now - now % HOUR_MS - 167 * HOUR_MS
    week = cover(lo, now - now % HOUR_MS + HOUR_MS, now)
    assert week["d"][0] == lo - lo % DAY_MS and week["d"][-1] == day - DAY_MS
    assert week["h"] == [day + h * HOUR_MS for h in range(6)] and week["m"] == []


def test_whole_summaries_are_kept_by_their_text_as_the_queues_parts_are() -> None:
    from queues.history import summary as summaries

    summaries.forget()
    span = {"send": NameRecord(completed=3, run=Sketch.of([5, 9]), slowest=[("7", 9.0)])}
    raw = dumps_summary(span)
    whole = summaries._loads_kept(raw, names=True)
    assert whole == loads_summary(raw) and whole is not None and "send" in whole.names
    assert summaries._loads_kept(raw.encode(), names=True) is whole  # decoded once
    part = summaries._loads_kept(raw)
    assert part == loads_summary(raw, names=False) and part is not None and not part.names
    summaries.forget()
    assert summaries._loads_kept(raw, names=True) is not whole
