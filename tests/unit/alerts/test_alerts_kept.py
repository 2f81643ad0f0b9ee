"""The overview's kept verdicts (queues/alerts/kept.py) answer what ``alerts_by_queue`` answers
from every queue evaluated afresh: after counts change, the last hour moves on its own, the
settings change, queues sit at their concurrency limit while the clock runs, and queues come
and go; and they evaluate only the queues whose inputs changed."""

from __future__ import annotations

import random
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from django.test import override_settings

from queues.alerts import kept as kept_module
from queues.alerts import thresholds
from queues.alerts.kept import KeptAlerts
from queues.alerts.thresholds import Alert, alerts_by_queue
from queues.reads.counts import QueueSummary
from queues.reads.keys import STATES, QueueRef

pytestmark = pytest.mark.unit

LOW = {"waiting": 2, "delayed": 1, "failed_last_hour": 1, "active_at_limit_seconds": 3}
LOWER = {"waiting": 1, "delayed": None, "failed_last_hour": 0, "new_failure_signatures": 1}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The rules' clock, moved by the test (the concurrency limit rule reads it)."""
    now = [1000.0]
    monkeypatch.setattr(thresholds, "time", SimpleNamespace(monotonic=lambda: now[0]))
    thresholds._at_limit_since.clear()
    yield now
    thresholds._at_limit_since.clear()


def make(rng: random.Random, ref: QueueRef) -> QueueSummary:
    counts = {state: rng.choice((0, 0, 1, 2, 3)) for state in STATES}
    cap = rng.choice((None, None, 1, 2))
    return QueueSummary(ref, counts, rng.random() < 0.1, cap, None, "bullmq:6")


def last_hour(
    rng: random.Random, found: list[QueueSummary], before: dict[QueueRef, dict[str, int]]
) -> tuple[dict[QueueRef, dict[str, int]], dict[QueueRef, list[str]]]:
    """The queues that keep failed jobs: most as before, some moved (the window went on)."""
    hour: dict[QueueRef, dict[str, int]] = {}
    for summary in found:
        if summary.counts["failed"]:
            kept = before.get(summary.ref)
            moved = kept is None or rng.random() < 0.15
            hour[summary.ref] = {"failed": rng.choice((0, 1, 2))} if moved else kept
    signatures = {
        ref: ["sig-a", "sig-b"][: rng.choice((1, 2))] for ref in hour if rng.random() < 0.3
    }
    return hour, signatures


def firing_afresh(
    found: list[QueueSummary],
    hour: dict[QueueRef, dict[str, int]],
    signatures: dict[QueueRef, list[str]],
) -> dict[QueueRef, list[Alert]]:
    return {
        ref: alerts for ref, alerts in alerts_by_queue(found, hour, signatures).items() if alerts
    }


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_kept_verdicts_answer_as_every_queue_evaluated_afresh(
    seed: int, clock: list[float]
) -> None:
    rng = random.Random(seed)
    every = [QueueRef("bull", f"q{n}") for n in range(120)]
    found = [make(rng, ref) for ref in every]
    kept = KeptAlerts()
    hour: dict[QueueRef, dict[str, int]] = {}
    for rules in (LOW, LOWER, LOW):
        with override_settings(BULLPEN={"PREFIXES": ["bull"], "ALERTS": rules}):
            for _ in range(8):
                found = list(found)
                for p in rng.sample(range(len(found)), rng.choice((0, 3, 10))):
                    found[p] = make(rng, found[p].ref)
                if rng.random() < 0.2:  # queues come and go
                    found = [s for s in found if rng.random() < 0.9]
                    found += [make(rng, QueueRef("bull", f"new-{rng.random()}"))]
                hour, signatures = last_hour(rng, found, hour)
                clock[0] += rng.choice((0.0, 1.0, 2.5))
                got = dict(kept.alerts(found, hour, signatures))
                assert got == firing_afresh(found, hour, signatures)
    assert any(
        alert.rule == "active_at_limit_seconds" for alerts in got.values() for alert in alerts
    )


def test_only_the_queues_whose_inputs_changed_are_evaluated(
    clock: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    evaluated: list[QueueRef] = []
    evaluate = kept_module.evaluate

    def counted(summary: QueueSummary, *args: object) -> list[Alert]:
        evaluated.append(summary.ref)
        return evaluate(summary, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(kept_module, "evaluate", counted)

    def summary(name: str, cap: int | None = None, **counts: int) -> QueueSummary:
        every = dict.fromkeys(STATES, 0) | counts
        return QueueSummary(QueueRef("bull", name), every, False, cap, None, None)

    found = [summary("a", waiting=5), summary("b", failed=4), summary("c", cap=1, active=1)]
    found += [summary(f"quiet-{n}") for n in range(50)]
    a, b, c = (s.ref for s in found[:3])
    kept = KeptAlerts()
    with override_settings(BULLPEN={"PREFIXES": ["bull"], "ALERTS": LOW}):
        hour = {b: {"failed": 4}}
        assert set(kept.alerts(found, hour, {})) == {a, b}
        assert len(evaluated) == 53  # the first view: every queue
        evaluated.clear()
        clock[0] += 10
        assert set(kept.alerts(found, hour, {})) == {a, b, c}  # c at its limit for 10 s
        assert evaluated == [c]  # nothing changed but the clock, which only c's verdict reads
        evaluated.clear()
        found[0] = summary("a", waiting=1)
        assert set(kept.alerts(found, {b: {"failed": 0}}, {})) == {c}
        assert sorted(evaluated) == [a, b, c]  # a's counts, b's last hour, c's clock
    evaluated.clear()
    with override_settings(BULLPEN={"PREFIXES": ["bull"], "ALERTS": {"waiting": 0}}):
        assert set(kept.alerts(found, {b: {"failed": 0}}, {})) == {a}
        assert len(evaluated) == 53  # other settings: every queue again
