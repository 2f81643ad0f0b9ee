"""A job hash decoded as Node's ``job.toJSON()`` shows it, and what the pages derive from it."""

from __future__ import annotations

import json

from dashboard.templatetags.bullpen import due_at, succeeded_on
from queues.reads.job_fields import due_at_ms, job_duration_ms, job_from_hash


def test_a_full_hash_reads_as_node_shows_it() -> None:
    raw = {
        "name": "send",
        "data": '{"to": "ada@example.com"}',
        "opts": '{"attempts": 3, "kl": 10, "de": {"id": "x"}}',
        "progress": "42",
        "returnvalue": '{"sent": 1}',
        "stacktrace": '["Error: boom"]',
        "timestamp": "1700000000000",
        "processedOn": "1700000000100",
        "finishedOn": "1700000000350",
        "delay": "0",
        "priority": "5",
        "atm": "2",
        "ats": "3",
        "failedReason": "boom",
        "pb": "worker-1",
    }
    job = job_from_hash("7", raw)
    assert job["id"] == "7" and job["name"] == "send"
    assert job["data"] == {"to": "ada@example.com"}
    assert job["opts"] == {"attempts": 3, "keepLogs": 10, "deduplication": {"id": "x"}}
    assert (job["progress"], job["returnvalue"], job["stacktrace"]) == (
        42,
        {"sent": 1},
        ["Error: boom"],
    )
    assert (job["priority"], job["attemptsMade"], job["attemptsStarted"]) == (5, 2, 3)
    assert job["processedBy"] == "worker-1"
    assert job["invalid"] == [] and job["truncated"] == {}
    assert job_duration_ms(job) == 250


def test_long_field_names_are_read_too() -> None:
    job = job_from_hash("1", {"name": "n", "timestamp": "1", "attemptsMade": "4", "rjk": "r"})
    assert job["attemptsMade"] == 4 and job["repeatJobKey"] == "r"
    assert job["opts"] == {"attempts": 0}  # Node's default, shown as Node shows it


def test_broken_fields_keep_their_text_and_are_named() -> None:
    job = job_from_hash(
        "2", {"data": "{not json", "opts": "[1]", "delay": "soon", "returnvalue": "plain"}
    )
    assert job["data"] == "{not json" and job["delay"] == "soon"
    assert job["opts"] == [1]  # not a dict: shown as it is
    assert job["returnvalue"] == "plain"  # BullMQ reads non-JSON text back as it is
    assert job["invalid"] == ["data", "delay", "name", "timestamp"]
    assert job["timestamp"] is None and job_duration_ms(job) is None


def test_fields_cut_by_the_cap_are_not_parsed() -> None:
    cut = '{"blob": "xxxx'
    job = job_from_hash(
        "3", {"name": "n", "timestamp": "1", "data": cut, "atm": "1"}, {"data": 9000}
    )
    assert job["data"] == cut and job["truncated"] == {"data": 9000}
    assert job["invalid"] == []
    # Short names in the cut list are reported under their long names.
    aliased = job_from_hash("4", {"name": "n", "timestamp": "1"}, {"pb": 10})
    assert aliased["truncated"] == {"processedBy": 10}


def test_numbers_written_as_floats_are_whole_numbers() -> None:
    job = job_from_hash("5", {"name": "n", "timestamp": "1700000000000.0", "priority": ""})
    assert job["timestamp"] == 1_700_000_000_000 and job["priority"] == 0
    assert json.dumps(job)  # everything decoded is plain JSON


def test_due_time_from_a_delayed_score() -> None:
    due = 1_760_000_000_123
    assert due_at_ms(str(due * 4096 + 17)) == due
    assert due_at_ms(float(due * 4096)) == due  # RESP3 answers a double
    assert due_at_ms(None) is None and due_at_ms("nope") is None
    # The score wins over what the job was added with; without one, timestamp + delay.
    assert due_at({"dueAt": due, "timestamp": 5, "delay": 10}) == due
    assert due_at({"dueAt": None, "timestamp": 5, "delay": 10}) == 15
    assert due_at({"timestamp": 5, "delay": 0}) is None
    assert due_at("not a job") is None


def test_succeeded_on_names_the_attempt() -> None:
    done = {"state": "completed", "failedReason": "boom", "attemptsMade": 2, "opts": {}}
    assert succeeded_on(done) == "succeeded on attempt 2"
    assert succeeded_on({**done, "opts": {"attempts": 5}}) == "succeeded on attempt 2 of 5"
    assert succeeded_on({**done, "failedReason": None, "stacktrace": ["x"]}) != ""
    assert succeeded_on({**done, "failedReason": None, "stacktrace": []}) == ""
    assert succeeded_on({**done, "state": "failed"}) == ""
