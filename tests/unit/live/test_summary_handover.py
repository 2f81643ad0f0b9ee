"""The kept hand-over of the reader's summaries to views (queues/handover/summaries.py) hands
what looking every queue up afresh hands (``SummaryHandover.full``): the same queues, in the
same order, the very same summary objects (the overview's kept list tells changed queues by
identity), after random events, exact reads (some in flight while a view asks), forgotten and
dropped queues, queues followed and no longer followed, restarts, and re-reads overdue or not;
also when the kept list was made ahead of the view a slice at a time, all of that happening
between two slices."""

from __future__ import annotations

import random

import pytest

from queues.handover import summaries as handover_module
from queues.handover.summaries import SummaryHandover
from queues.live.count_changes import LiveCounts
from queues.live.events import QueueEvent
from queues.live.outbox import Outbox
from queues.live.protocol import LiveMessage, Topic
from queues.live.streams import StreamReader
from queues.live.watching import Watching
from queues.reads.counts import QueueSummary
from queues.reads.keys import STATES, QueueRef
from queues.reads.positioned_counts import Positioned

EVENTS = ("active", "completed", "failed", "waiting", "delayed", "added", "paused", "stalled")


async def _drop(topic: Topic, message: LiveMessage) -> None:
    return None


def _follow(streams: StreamReader, ref: QueueRef) -> None:
    """What following a queue's stream leaves behind (its first read is Redis's)."""
    streams.last_ids[ref.key("events")] = "0-0"
    streams.refs[ref.key("events")] = ref
    streams._followed.add(ref)
    streams.followed_changes += 1


def _read(rng: random.Random, ref: QueueRef) -> Positioned:
    counts = {state: rng.choice((0, 0, 1, 3)) for state in STATES}
    summary = QueueSummary(ref, counts, rng.random() < 0.1, None, None, "bullmq:6")
    return Positioned(summary, rng.choice((None, "0-0", "5-0")))


def _event(rng: random.Random, sequence: int) -> QueueEvent:
    name = rng.choice(EVENTS)
    fields = {"prev": rng.choice(("waiting", "active", "delayed"))}
    return QueueEvent(f"{sequence}-0", name, str(rng.randrange(20)), fields)


def _same(kept: dict[QueueRef, QueueSummary], afresh: dict[QueueRef, QueueSummary]) -> None:
    assert list(kept) == list(afresh)
    assert all(kept[ref] is afresh[ref] for ref in afresh)


@pytest.mark.parametrize("seed", range(12))
def test_the_kept_hand_over_hands_what_a_fresh_look_up_hands(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handover_module, "KEEP_FROM", 5)
    monkeypatch.setattr(handover_module, "SLICE", 7)
    rng = random.Random(seed)
    every = [QueueRef("bull", f"q{n}") for n in range(60)]
    streams = StreamReader(block_ms=1000, read_pause=0.03)
    # A re-read is due at once: whether it is overdue is the slack's to say.
    counts = LiveCounts(Outbox(_drop, lambda: None), Watching(), 1.0, resync_interval=-1.0)
    handover = SummaryHandover(counts, streams)
    for ref in every:
        if rng.random() < 0.9:
            _follow(streams, ref)
    counts.took_exact([_read(rng, ref) for ref in every], counts.reading_begins(every))
    counts.reading_ends(every)
    asked = list(every)
    in_flight: list[QueueRef] = []
    handed = prepared = 0
    for step in range(400):
        in_flight = _move(rng, counts, streams, every, in_flight, step)
        if rng.random() < 0.02:
            asked = rng.choice(
                (list(every), every[: rng.randrange(len(every))], every[:3], every + every[:2])
            )
        if rng.random() < 0.5:
            # Made ahead of the view, slice by slice, the reader moving on between slices.
            for _ in handover.preparing(asked):
                in_flight = _move(rng, counts, streams, every, in_flight, step)
                prepared += 1
        slack = rng.choice((0.0, 1000.0))
        kept = handover.summaries(asked, slack)
        _same(kept, SummaryHandover(counts, streams).full(asked, slack))
        handed += len(kept)
    assert handed  # the views were handed summaries, not only left to read them
    assert prepared  # some kept lists were made ahead, a slice at a time


def _move(
    rng: random.Random,
    counts: LiveCounts,
    streams: StreamReader,
    every: list[QueueRef],
    in_flight: list[QueueRef],
    step: int,
) -> list[QueueRef]:
    """One random move of the reader; the queues whose exact read is in flight after it."""
    roll = rng.random()
    if roll < 0.45:
        for _ in range(rng.randrange(1, 6)):
            counts.take(rng.choice(every), _event(rng, step + 10))
    elif roll < 0.6 and not in_flight:
        in_flight = rng.sample(every, rng.randrange(1, 10))
        taken = counts.reading_begins(in_flight)
        if rng.random() < 0.5:  # some read, others still in flight when the view asks
            counts.took_exact([_read(rng, ref) for ref in in_flight], taken)
            counts.reading_ends(in_flight)
            in_flight = []
    elif roll < 0.7 and in_flight:
        counts.reading_ends(in_flight)  # the read failed: the old base stays
        in_flight = []
    elif roll < 0.75:
        counts.doubt_drifted()
    elif roll < 0.78:
        counts.drop(rng.sample(every, 2))
    elif roll < 0.82:
        ref = rng.choice(every)
        if streams.follows(ref):
            streams.unfollow([ref])
        else:
            _follow(streams, ref)
    elif roll < 0.83:
        counts.restart()
    return in_flight


def test_a_view_with_nothing_changed_looks_at_no_queue_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    every = [QueueRef("bull", f"q{n}") for n in range(2000)]
    streams = StreamReader(block_ms=1000, read_pause=0.03)
    counts = LiveCounts(Outbox(_drop, lambda: None), Watching(), 1.0, resync_interval=30.0)
    handover = SummaryHandover(counts, streams)
    for ref in every:
        _follow(streams, ref)
    waiting = {state: 3 if state == "waiting" else 0 for state in STATES}
    read = [Positioned(QueueSummary(ref, waiting, False, None, None, None), None) for ref in every]
    counts.took_exact(read, counts.reading_begins(every))
    counts.reading_ends(every)
    first = handover.summaries(every, 1.0)
    assert len(first) == len(every)
    looked: list[QueueRef] = []
    one = handover._one
    monkeypatch.setattr(handover, "_one", lambda ref: looked.append(ref) or one(ref))
    again = handover.summaries(every, 1.0)
    _same(again, first)
    assert looked == []
    counts.take(every[7], QueueEvent("9-0", "active", "1", {"prev": "waiting"}))
    moved = handover.summaries(every, 1.0)
    assert looked == [every[7]]
    assert moved[every[7]] is not first[every[7]]
    assert moved[every[7]].counts["active"] == first[every[7]].counts["active"] + 1
