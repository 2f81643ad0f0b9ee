"""What an event records: wait and run from the job's own timestamps, jobs that cannot be
measured, clocks that went backwards, retries told from delayed jobs, and the cap on names."""

from __future__ import annotations

from queues.history.measure import FIELDS, UNKNOWN_NAME, Noted, kind_of, outcome
from queues.history.recorder import HistoryRecorder
from queues.history.storage import FOLDED_NAME, NAME_CAP
from queues.reads.keys import QueueRef


def fields(**values: object) -> list[str | None]:
    return [None if values.get(f) is None else str(values[f]) for f in FIELDS]


def test_wait_and_run_come_from_the_jobs_timestamps() -> None:
    noted = Noted("completed", "7", 10_000)
    found = outcome(
        noted, fields(timestamp=1000, delay=500, processedOn=1700, finishedOn=1750, name="send")
    )
    assert found is not None
    assert (found.name, found.wait_ms, found.run_ms, found.at_ms) == ("send", 200, 50, 1750)
    assert not found.unmeasured and found.negative == 0
    assert found.dedup_key == "7:1750"


def test_jobs_without_timestamps_are_counted_not_measured() -> None:
    gone = outcome(Noted("failed", "8", 5000), fields())
    assert gone is not None
    assert (gone.name, gone.unmeasured, gone.wait_ms, gone.run_ms) == (
        UNKNOWN_NAME,
        True,
        None,
        None,
    )
    assert gone.at_ms == 5000  # the event's time when the hash is gone
    never_ran = outcome(
        Noted("failed", "9", 5000), fields(timestamp=1000, finishedOn=1200, name="x")
    )
    assert never_ran is not None and never_ran.unmeasured


def test_negative_durations_are_dropped_and_counted() -> None:
    behind = outcome(
        Noted("completed", "1", 0),
        fields(timestamp=10_000, processedOn=4000, finishedOn=4100, name="n"),
    )
    assert behind is not None
    assert (behind.wait_ms, behind.run_ms, behind.negative, behind.unmeasured) == (
        None,
        100,
        1,
        False,
    )


def test_retries_are_told_from_jobs_added_with_a_delay() -> None:
    assert kind_of("waiting", {"prev": "active"}) == "retried"
    assert kind_of("waiting", {"prev": "delayed"}) is None
    assert kind_of("added", {}) is None
    assert kind_of("stalled", {}) == "stalled"
    delayed = Noted("delayed", "3", 0)
    assert outcome(delayed, fields(name="n", atm=0)) is None
    retried = outcome(delayed, fields(name="n", atm=1))
    assert retried is not None and retried.kind == "retried"


def test_names_past_the_cap_are_folded() -> None:
    recorder = HistoryRecorder()
    ref = QueueRef("bull", "q", "default")
    recorder.names[ref] = set()
    kept = {recorder._capped(ref, f"name-{i}") for i in range(10_000)}
    assert len(kept) == NAME_CAP + 1 and FOLDED_NAME in kept
    assert recorder._capped(ref, "name-3") == "name-3"  # a name kept stays itself
    assert len(recorder.new_names[ref]) == NAME_CAP
