"""Counts that move with BullMQ's event stream between exact reads.

Re-reading a busy queue's eight counts after every event costs Redis more than one Bull Board
tab; reading them rarely makes the page lag. Instead each event moves the counts of the last
exact read by the transition it names (``active`` with ``prev: waiting``: waiting -1, active
+1), and the follower re-reads each changed queue every few seconds to correct what events
cannot say:

* retention (``removeOnComplete`` / ``removeOnFail``) trims finished jobs without an event: a
  state whose exact count grew less than its events said is marked *trimmed*, and events stop
  growing it until an exact read shows it growing as predicted again;
* a job added with a priority reports ``waiting`` like any other; it is counted as waiting
  until the next exact read, except in a queue whose last read held prioritized jobs only;
* an exact read names the last event it includes (its stream position): events up to it are
  already in the counts and move nothing, the reader's later ones move them as usual;
* an event without a known transition (``stalled``, ``cleaned``, ``paused``, an event of a
  newer BullMQ) makes :meth:`CountEstimates.apply` answer ``UNCERTAIN``: read that queue soon.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum

from queues.live.events import QueueEvent
from queues.reads.keys import STATES, QueueRef

FINISHED = ("completed", "failed")
# Events that change no count (the event that follows says where a job went).
NO_COUNT_CHANGE = frozenset(
    {"added", "progress", "drained", "retries-exhausted", "duplicated", "deduplicated", "debounced"}
)
# How many just-added job ids a queue remembers, to tell a new delayed job from a retry.
RECENT_ADDS = 2048


class Effect(Enum):
    NONE = "none"  # no count changed
    MOVED = "moved"  # the estimate moved
    UNCERTAIN = "uncertain"  # the estimate cannot follow: read this queue's counts soon


@dataclass
class _Queue:
    counts: dict[str, int]
    exact: dict[str, int]
    paused: bool
    legacy_paused: bool
    trimmed: set[str] = field(default_factory=set)
    # Growth of finished states that events announced since the last exact read.
    announced: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FINISHED, 0))
    # Jobs whose last event was ``added``: their next event says where they were put.
    just_added: OrderedDict[str, None] = field(default_factory=OrderedDict)
    # The last event the exact read includes (None: unknown, every event moves the counts).
    position: tuple[int, int] | None = None


class CountEstimates:
    def __init__(self) -> None:
        self._queues: dict[QueueRef, _Queue] = {}

    def known(self, ref: QueueRef) -> bool:
        return ref in self._queues

    def counts(self, ref: QueueRef) -> dict[str, int]:
        return dict(self._queues[ref].counts)

    def paused(self, ref: QueueRef) -> bool:
        return self._queues[ref].paused

    def holds(self, ref: QueueRef, counts: dict[str, int], paused: bool) -> bool:
        """Whether ``ref``'s estimate is ``counts`` and ``paused`` (compared without a copy:
        a view of 50,000 queues asks for each)."""
        queue = self._queues.get(ref)
        return queue is not None and queue.paused == paused and queue.counts == counts

    def forget(self, ref: QueueRef) -> None:
        self._queues.pop(ref, None)

    def clear(self) -> None:
        self._queues.clear()

    def set_exact(
        self,
        ref: QueueRef,
        counts: dict[str, int],
        paused: bool,
        legacy_paused: bool,
        position: str | None = None,
    ) -> None:
        """Take an exact read as the new base, and learn from how far the estimate drifted.
        ``position``: the id of the last event of the queue's stream the read includes."""
        old = self._queues.get(ref)
        fresh = _Queue(dict(counts), dict(counts), paused, legacy_paused)
        fresh.position = None if position is None else stream_position(position)
        if old is not None:
            fresh.just_added = old.just_added
            for state in FINISHED:
                announced = old.announced[state]
                grew = counts.get(state, 0) - old.exact.get(state, 0)
                if announced and grew < announced:
                    fresh.trimmed.add(state)  # retention removes what completes
                elif state in old.trimmed and not (announced and grew >= announced):
                    fresh.trimmed.add(state)
        self._queues[ref] = fresh

    def apply(self, ref: QueueRef, event: QueueEvent) -> Effect:
        queue = self._queues.get(ref)
        if queue is None:
            return Effect.UNCERTAIN
        name = event.event
        if name == "added" and event.job_id:
            _remember(queue.just_added, event.job_id)
            return Effect.NONE
        new_job = event.job_id is not None and event.job_id in queue.just_added
        if new_job and event.job_id is not None:
            del queue.just_added[event.job_id]
        if queue.position is not None and stream_position(event.stream_id) <= queue.position:
            return Effect.NONE  # the exact read already holds it
        if name in NO_COUNT_CHANGE:
            return Effect.NONE
        prev = event.fields.get("prev")
        if name == "waiting":
            source = prev if prev in STATES else None
            return _move(queue, source, _waiting_target(queue))
        if name == "active":
            return _move(queue, _active_source(queue), "active")
        if name in FINISHED:
            return _move(queue, "active", name)
        if name == "delayed":  # a new delayed job, or a retry waiting for its backoff
            return _move(queue, None if new_job else "active", "delayed")
        if name == "waiting-children":
            return _move(queue, "active" if prev == "active" else None, "waiting-children")
        if name == "removed" and prev in STATES:
            return _move(queue, prev, None)
        if name in ("paused", "resumed"):
            queue.paused = name == "paused"
        return Effect.UNCERTAIN


def stream_position(stream_id: str) -> tuple[int, int]:
    """A stream id (``ms-seq``) as something ordered like Redis orders them."""
    ms, _, seq = stream_id.partition("-")
    try:
        return int(ms), int(seq or 0)
    except ValueError:
        return 0, 0


def _remember(recent: OrderedDict[str, None], job_id: str) -> None:
    recent[job_id] = None
    if len(recent) > RECENT_ADDS:
        recent.popitem(last=False)


def _waiting_target(queue: _Queue) -> str:
    if queue.legacy_paused and queue.paused:
        return "paused"
    if queue.exact.get("prioritized", 0) > 0 and queue.exact.get("waiting", 0) == 0:
        return "prioritized"
    return "waiting"


def _active_source(queue: _Queue) -> str:
    if queue.counts.get("waiting", 0) > 0 or queue.counts.get("prioritized", 0) == 0:
        return "waiting"
    return "prioritized"


def _move(queue: _Queue, source: str | None, target: str | None) -> Effect:
    counts = queue.counts
    effect = Effect.MOVED
    if source is not None:
        if counts.get(source, 0) > 0:
            counts[source] -= 1
        else:
            effect = Effect.UNCERTAIN  # the estimate was already off: read soon
    if target is not None:
        if target in FINISHED:
            queue.announced[target] += 1
            if target in queue.trimmed:
                return effect
        counts[target] = counts.get(target, 0) + 1
    return effect
