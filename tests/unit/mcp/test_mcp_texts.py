"""The MCP tools' answers as text: counts, a job, failure groups, history, search matches."""

from __future__ import annotations

import json

from dashboard.mcp import texts


def test_queues_with_counts_and_flags() -> None:
    body = {
        "matching": 3,
        "queues": [
            {"name": "email", "paused": True, "readOnly": True, "counts": {"failed": 2}},
            {"name": "sms", "paused": False, "counts": {"waiting": 7, "completed": 1}},
        ],
    }
    assert texts.queues_text(body).splitlines() == [
        "2 queue(s) of 3 matching:",
        "- email: waiting 0, active 0, failed 2, delayed 0, prioritized 0, completed 0"
        " [paused, read-only]",
        "- sms: waiting 7, active 0, failed 0, delayed 0, prioritized 0, completed 1",
    ]


def test_a_failed_task_job_with_its_reason_and_last_frame() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/mail.py", line 3, in send\n    raise TimeoutError\n'
        "TimeoutError: smtp"
    )
    job = {
        "id": "7",
        "name": "app.tasks.send",
        "state": "failed",
        "attemptsMade": 3,
        "opts": {"attempts": 3},
        "timestamp": 1_700_000_000_000,
        "data": {"args": ["<script>"], "kwargs": {}},
        "failedReason": "smtp\nline two",
        "stacktrace": ["older", trace],
        "redacted": ["data"],
    }
    text = texts.job_text("email", job)
    assert text.splitlines()[0] == "Job 7 in email: app.tasks.send — failed"
    assert "attempts 3 of 3; added 2023-11-14 22:13:20 UTC, started -, finished -" in text
    assert "Django task app.tasks.send" in text
    assert 'data: {"args": ["<script>"], "kwargs": {}}' in text  # text: nothing to escape
    assert "failed reason: smtp line two" in text
    assert "last stack frame: mail.py in send" in text
    assert text.endswith("redacted: data")


def test_long_fields_are_cut() -> None:
    job = {"id": "1", "name": "x", "state": "completed", "data": "y" * 5000, "returnvalue": 1}
    line = next(x for x in texts.job_text("q", job).splitlines() if x.startswith("data: "))
    assert len(line) == len("data: ") + texts.FIELD_CHARS and line.endswith("…")
    assert "return value: 1" in texts.job_text("q", job)


def test_failure_groups_biggest_first_and_capped() -> None:
    groups = [
        {
            "signature": f"s{n}",
            "reason": f"E{n}",
            "frame": "a.py in f",
            "count": 10 - n,
            "lastSeen": 0,
            "exampleId": str(n),
        }
        for n in range(4)
    ]
    body = {"groups": groups, "scanned": 10, "totalFailed": 12, "complete": False}
    lines = texts.groups_text("q", body, most=2).splitlines()
    assert lines[0] == "q: 12 failed jobs, 10 read, 4 failure group(s) (partial)"
    assert lines[1] == "- 10 x E0 at a.py in f (last -, e.g. job 0; signature s0)"
    assert lines[-1] == "… 2 more group(s)"


def test_history_and_search() -> None:
    totals = {
        "completed": 90,
        "failed": 10,
        "retried": 1,
        "stalled": 0,
        "failure_rate": 0.1,
        "wait_ms": {"p50": 3.2, "p95": 40, "p99": None},
        "run_ms": {"p50": None, "p95": None},
    }
    assert texts.history_text("q", "24h", totals).splitlines() == [
        "q, last 24h: 90 completed, 10 failed (10.0 % failure rate), 1 retried, 0 stalled",
        "wait p50 3 ms, p95 40 ms; run p50 -, p95 -",
    ]
    match = {"queue": "q", "id": "5", "state": "failed", "name": "n", "in": "data", "text": "hi"}
    found = texts.search_text([match], {"scanned": 9, "queues": 2, "truncated": True})
    assert found.splitlines() == [
        "1 match(es); 9 jobs read in 2 queue(s) (budget reached: not every job was read)",
        "- q job 5 (failed) n: data: hi",
    ]
    assert json.loads(texts.as_json({"a": [1]})) == {"a": [1]}
