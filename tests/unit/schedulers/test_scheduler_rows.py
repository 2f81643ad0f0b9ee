"""A row of the schedulers page from the script's answer: overdue or not, its next job, the
last jobs it made, and the orders the page offers."""

from __future__ import annotations

from typing import Any

from queues.reads.keys import QueueRef
from queues.schedulers.rows import is_overdue, next_job_id, ordered, scheduler_row

REF = QueueRef("bull", "mail", "default")
NOW = 1_800_000_000_000


def raw(
    member: str, next_ms: int, pairs: list[str], state: str, made: list[str] | None = None
) -> list[Any]:
    return [member, str(next_ms), pairs, state, made or []]


def test_a_run_that_passed_with_its_job_not_taken_is_overdue() -> None:
    assert is_overdue(NOW - 1, "waiting", NOW)
    assert is_overdue(NOW - 1, "delayed", NOW)
    assert is_overdue(NOW, "missing", NOW)
    # A worker holds it: BullMQ moves the next run on as it takes the job.
    assert not is_overdue(NOW - 1, "active", NOW)
    assert not is_overdue(NOW + 1, "delayed", NOW)


def test_a_scheduler_row_names_its_next_job_and_the_last_jobs_it_made() -> None:
    made = ["repeat:digest:1700", "completed", "1750", "repeat:digest:1600", "failed", "1650"]
    pairs = ["name", "digest", "every", "100", "ic", "3"]
    row = scheduler_row(REF, raw("digest", NOW - 5, pairs, "waiting", made), NOW)
    assert row["queue"] == "mail"
    assert row["connection"] == "default"
    assert (row["id"], row["name"], row["every"], row["pattern"]) == ("digest", "digest", 100, None)
    assert row["nextJob"] == next_job_id("digest", NOW - 5) == f"repeat:digest:{NOW - 5}"
    assert row["overdue"] is True
    assert row["lastRun"] == 1700
    assert row["lastJobs"] == [
        {"id": "repeat:digest:1700", "state": "completed", "finishedOn": 1750},
        {"id": "repeat:digest:1600", "state": "failed", "finishedOn": 1650},
    ]
    assert row["legacy"] is False


def test_a_pattern_scheduler_that_never_ran_has_no_last_run() -> None:
    pairs = ["name", "report", "pattern", "0 9 * * *", "tz", "Europe/Paris", "ic", "1"]
    row = scheduler_row(REF, raw("report", NOW + 60_000, pairs, "delayed"), NOW)
    assert (row["pattern"], row["tz"], row["every"]) == ("0 9 * * *", "Europe/Paris", None)
    assert row["lastRun"] is None
    assert row["lastJobs"] == []
    assert row["overdue"] is False


def test_a_legacy_repeatable_is_flagged_and_never_called_overdue() -> None:
    row = scheduler_row(REF, raw("old:abc::UTC:0 * * * *", NOW - 10, [], ""), NOW)
    assert row["legacy"] is True
    assert (row["name"], row["pattern"], row["tz"]) == ("old", "0 * * * *", "UTC")
    assert row["nextJob"] is None
    assert row["overdue"] is False


def test_overdue_first_then_the_next_to_run_or_as_asked() -> None:
    def row(queue: str, next_ms: int, overdue: bool) -> dict[str, Any]:
        return {"queue": queue, "id": queue, "next": next_ms, "overdue": overdue}

    rows = [row("a", 300, False), row("b", 200, True), row("c", 100, False)]
    assert [r["queue"] for r in ordered(rows)] == ["b", "c", "a"]
    assert [r["queue"] for r in ordered(rows, "next")] == ["c", "b", "a"]
    assert [r["queue"] for r in ordered(rows, "-next")] == ["a", "b", "c"]
    assert [r["queue"] for r in ordered(rows, "queue")] == ["a", "b", "c"]
