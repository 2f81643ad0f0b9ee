"""A span's summary: what a chart's point and a range's counts need, without a sketch.

Stored next to the span's sketches (storage.py) and kept longer: JSON of ``{"q": [completed,
failed, retried, stalled, unmeasured, negative, [wait p50, p95, p99], [run p50, p95, p99]],
"n": {name: [completed, failed, retried, stalled, unmeasured, negative, [[job id, run ms],
...]]}}``. The queue's percentiles are read from the span's own sketches when it is written;
a job name's come from sketches only, over a whole range (read.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from queues.history.kept import Kept
from queues.history.model import Percentiles
from queues.history.record import NameRecord, Span, by_name, whole
from queues.history.sketch import Sketch
from queues.history.spans import Ask, mget_each, read_spans_of
from queues.history.storage import summary_keys
from queues.reads.keys import QueueRef

# A summary's counts: completed, failed, retried, stalled, unmeasured, negative.
Counts = tuple[int, int, int, int, int, int]
NO_COUNTS: Counts = (0, 0, 0, 0, 0, 0)


@dataclass
class Summary:
    # The queue's counts and percentiles.
    counts: Counts = NO_COUNTS
    wait: Percentiles = field(default_factory=Percentiles)
    run: Percentiles = field(default_factory=Percentiles)
    # Each job name's counts and slowest runs; read only when asked (``names=True``).
    names: dict[str, tuple[Counts, list[tuple[str, float]]]] = field(default_factory=dict)


def percentiles(sketch: Sketch) -> Percentiles:
    p50, p95, p99 = (
        None if v is None else round(v, 1) for v in sketch.quantiles((0.5, 0.95, 0.99))
    )
    return Percentiles(p50, p95, p99)


def _counts(record: NameRecord) -> Counts:
    return (
        record.completed,
        record.failed,
        record.retried,
        record.stalled,
        record.unmeasured,
        record.negative,
    )


def _read_counts(raw: Any) -> Counts:
    if not isinstance(raw, list) or len(raw) < 6:
        raise ValueError("not a summary")
    a, b, c, d, e, f = raw[:6]
    return (int(a), int(b), int(c), int(d), int(e), int(f))


def _percentiles(raw: Any) -> Percentiles:
    if not isinstance(raw, list) or len(raw) != 3:
        return Percentiles()
    p50, p95, p99 = (None if v is None else float(v) for v in raw)
    return Percentiles(p50, p95, p99)


def summarize(span: Span) -> Summary:
    total = whole(span)
    return Summary(
        counts=_counts(total),
        wait=percentiles(total.wait),
        run=percentiles(total.run),
        names={
            name: (_counts(record), list(record.slowest)) for name, record in by_name(span).items()
        },
    )


def dumps_summary(span: Span) -> str:
    summary = summarize(span)
    stored = {  # "q" first: loads_summary may read it alone
        "q": [
            *summary.counts,
            [summary.wait.p50, summary.wait.p95, summary.wait.p99],
            [summary.run.p50, summary.run.p95, summary.run.p99],
        ],
        "n": {
            name: [*counts, [[job_id, run] for job_id, run in slowest]]
            for name, (counts, slowest) in summary.names.items()
        },
    }
    return json.dumps(stored, separators=(",", ":"))


def loads_summary(raw: str | bytes | None, names: bool = True) -> Summary | None:
    """A stored summary (without its names' unless ``names``); None for a missing key or one
    that cannot be read."""
    if not raw:
        return None
    text = raw.decode() if isinstance(raw, bytes) else raw
    if not names:
        # The queue's part comes first and holds only numbers: read it alone, not the names'.
        text = text.split(',"n":', 1)[0] + "}"
    try:
        data = json.loads(text)
        queue = data["q"]
        summary = Summary(
            counts=_read_counts(queue),
            wait=_percentiles(queue[6] if len(queue) > 6 else None),
            run=_percentiles(queue[7] if len(queue) > 7 else None),
        )
        if names:
            for name, value in (data.get("n") or {}).items():
                runs = value[6] if len(value) > 6 and isinstance(value[6], list) else []
                summary.names[str(name)] = (
                    _read_counts(value),
                    [(str(pair[0]), float(pair[1])) for pair in runs if len(pair) == 2],
                )
        return summary
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def _loads_queue_part(raw: str | bytes) -> Summary | None:
    return loads_summary(raw, names=False)


# Summaries read without their names' part (series and totals), each stored text decoded once
# in a process (kept.py): at most 16 MB, some 28,000 of them.
_KEPT: Kept[Summary | None] = Kept(16 * 1024 * 1024, lambda _: 600)


# Summaries read whole (a names' table), kept the same way: at most 16 MB, some 8,000 minutes
# of 5 names (about 2 KB each, their slowest runs most of it).
_NAMES_KEPT: Kept[Summary | None] = Kept(
    16 * 1024 * 1024, lambda found: 600 + 300 * len(found.names) if found else 100
)


def _loads_kept(raw: str | bytes, names: bool = False) -> Summary | None:
    if names:
        return _NAMES_KEPT.read(raw, loads_summary)
    return _KEPT.read(raw, _loads_queue_part)


def forget() -> None:
    """Drops every kept summary (a benchmark's cold read)."""
    _KEPT.forget()
    _NAMES_KEPT.forget()


async def read_summaries_of(
    refs: Sequence[QueueRef], tier: str, starts: list[int], now_ms: int, names: bool = True
) -> dict[QueueRef, dict[int, Summary] | BaseException]:
    """:func:`read_summaries` of several queues, each step in one round trip per connection;
    a queue whose read failed gets the error instead."""
    replies = await mget_each(refs, [summary_keys(ref, tier, starts) for ref in refs])
    out: dict[QueueRef, dict[int, Summary] | BaseException] = {}
    missing: dict[QueueRef, list[Ask]] = {}
    for ref, reply in zip(refs, replies, strict=True):
        if isinstance(reply, BaseException):
            out[ref] = reply
            continue
        found: dict[int, Summary] = {}
        for start, raw in zip(starts, reply, strict=True):
            summary = _loads_kept(raw, names) if raw else None
            if summary is None:
                missing.setdefault(ref, []).append((tier, start))
            else:
                found[start] = summary
        out[ref] = found
    if missing:
        spans = await read_spans_of(missing, now_ms)
        for ref, made in spans.items():
            found_ref = out[ref]
            if isinstance(made, BaseException):
                out[ref] = made
            elif not isinstance(found_ref, BaseException):
                found_ref.update(
                    (start, summarize(span)) for (_, start), span in made.items() if span
                )
    return out


async def read_summaries(
    ref: QueueRef, tier: str, starts: list[int], now_ms: int, names: bool = True
) -> dict[int, Summary]:
    """The summaries of ``tier``'s spans starting at ``starts``; a span without one (still
    open, its roll-up not written yet, or written before summaries were) is summarised from
    its sketches while they are kept."""
    found = (await read_summaries_of([ref], tier, starts, now_ms, names))[ref]
    if isinstance(found, BaseException):
        raise found
    return found
