"""BullMQ's Postgres rows as Bullpen shows them: a paused queue's waiting jobs count as paused
(as Node reports them), a waiting job with a priority is prioritized, long fields are cut."""

from __future__ import annotations

from queues.postgres import rows
from queues.reads.keys import STATES, QueueRef

REF = QueueRef("bull", "shop", "pg")
COUNTS = {
    "active": 1,
    "completed": 2,
    "failed": 3,
    "delayed": 4,
    "waiting": 5,
    "prioritized": 6,
    "waiting-children": 7,
    "paused": None,
}


def test_counts_and_meta_make_a_summary() -> None:
    meta = [
        {"field": "concurrency", "value": "3"},
        {"field": "max", "value": "10"},
        {"field": "duration", "value": "1000"},
        {"field": "version", "value": "bullmq:6.7.0"},
    ]
    found = rows.summary(REF, [COUNTS], meta)
    assert list(found.counts) == list(STATES)
    assert found.counts["waiting"] == 5 and found.counts["paused"] == 0
    assert not found.paused and found.global_concurrency == 3
    assert found.rate_limit == (10, 1000) and found.version == "bullmq:6.7.0"


def test_a_paused_queue_counts_its_waiting_jobs_as_paused() -> None:
    found = rows.summary(REF, [{**COUNTS, "paused": "1"}], [{"field": "paused", "value": "1"}])
    assert found.paused and (found.counts["waiting"], found.counts["paused"]) == (0, 5)
    assert found.counts["prioritized"] == 6  # prioritized jobs are counted as they are


def test_odd_rows_read_as_nothing_rather_than_failing() -> None:
    found = rows.summary(REF, [], [{"field": "max", "value": "lots"}])
    assert set(found.counts.values()) == {0} and found.rate_limit is None


def test_job_state_and_cut() -> None:
    assert rows.job_state({"state": "waiting", "priority": 0}) == "waiting"
    assert rows.job_state({"state": "waiting", "priority": 3}) == "prioritized"
    assert rows.job_state({"state": "delayed", "priority": 3}) == "delayed"
    kept, lengths = rows.cut({"data": "x" * 10, "name": "ok"}, 4)
    assert kept == {"data": "xxxx", "name": "ok"} and lengths == {"data": 10}
    assert rows.cut({"data": "x" * 10}, None) == ({"data": "x" * 10}, {})
