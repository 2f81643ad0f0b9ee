"""The count rules' verdict on every queue, kept between views of the overview.

A queue's alerts from :func:`thresholds.evaluate` follow from its summary, its failed jobs and
new failure signatures of the last hour, and its thresholds (the settings), and from the clock
only while it runs at its concurrency limit. The live reader hands a view the same summary
objects while counts stay, so a queue is evaluated again only when its summary, its last
hour or the settings changed, or while it is at its limit: at 50,000 queues a view evaluates
those that changed, not all of them. :func:`thresholds.alerts_by_queue` states the rules;
the tests compare the two.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, Sequence

from queues.alerts.thresholds import Alert, evaluate
from queues.config.settings import get_config
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef


class KeptAlerts:
    def __init__(self) -> None:
        self.config: object = None
        self.summaries: list[QueueSummary] = []
        # A queue's last hour as last evaluated (failed jobs, new signatures): kept for the
        # queues that failed some, the others' are none.
        self.hour: dict[QueueRef, tuple[int, tuple[str, ...]]] = {}
        self.at_limit: set[int] = set()  # positions whose alerts move with the clock
        self.firing: dict[QueueRef, list[Alert]] = {}

    def alerts(
        self,
        found: Sequence[QueueSummary],
        failed_last_hour: Mapping[QueueRef, Mapping[str, int]],
        signatures: Mapping[QueueRef, Sequence[str]],
    ) -> Mapping[QueueRef, list[Alert]]:
        """The alerts firing on each of ``found`` that has some, as ``alerts_by_queue`` decides
        them from the same arguments (kept for the next view: not to be changed)."""
        config = get_config()
        was = self.summaries
        if config is not self.config or len(found) != len(was):
            again: Sequence[int] | range = range(len(found))
        else:
            again = list(itertools.compress(range(len(found)), map(operator.is_not, found, was)))
            if any(found[p].ref != was[p].ref for p in again):
                again = range(len(found))  # a queue came as another went
        if isinstance(again, range):
            self.config, self.summaries = config, list(found)
            self.hour.clear()
            self.at_limit.clear()
            self.firing.clear()
        moved = set(again) | self.at_limit
        hours = [
            ref
            for ref, counts in failed_last_hour.items()
            if self.hour.get(ref) != (counts.get("failed", 0), tuple(signatures.get(ref, ())))
        ]
        hours += [ref for ref in self.hour if ref not in failed_last_hour]
        if hours:  # a last hour moved on its own (the window's start passed a failure)
            position = {summary.ref: p for p, summary in enumerate(found)}
            moved.update(position[ref] for ref in hours if ref in position)
        for p in moved:
            self._evaluate(p, found[p], failed_last_hour, signatures)
        return self.firing

    def _evaluate(
        self,
        p: int,
        summary: QueueSummary,
        failed_last_hour: Mapping[QueueRef, Mapping[str, int]],
        signatures: Mapping[QueueRef, Sequence[str]],
    ) -> None:
        ref = summary.ref
        self.summaries[p] = summary
        failed = failed_last_hour.get(ref, {}).get("failed", 0)
        new = tuple(signatures.get(ref, ()))
        if ref in failed_last_hour:
            self.hour[ref] = (failed, new)
        else:
            self.hour.pop(ref, None)
        cap = summary.global_concurrency
        if cap and summary.counts["active"] >= cap:
            self.at_limit.add(p)
        else:
            self.at_limit.discard(p)
        firing = evaluate(summary, failed, new)
        if firing:
            self.firing[ref] = firing
        else:
            self.firing.pop(ref, None)
