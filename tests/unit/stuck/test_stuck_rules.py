"""What makes a job stuck, where its lock is, what the overview's problems say of a queue with
stuck jobs, and what the page confirms after moving one."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import translation

from dashboard.pages.confirmations import confirmation
from dashboard.pages.overview_list import queue_problems
from queues.actions.result import ActionResult
from queues.reads.keys import QueueRef
from queues.reads.stuck import is_stuck, lock_exists, lock_key


@pytest.mark.parametrize(
    ("state", "reply", "stuck"),
    [
        ("active", 0, True),
        ("active", 1, False),
        ("waiting", 0, False),  # a waiting job has no lock, and needs none
        ("completed", 0, False),
        ("active", Exception("WRONGTYPE"), False),  # an unreadable lock says nothing
        ("active", None, False),
    ],
)
def test_only_an_active_job_without_a_lock_is_stuck(state: str, reply: Any, stuck: bool) -> None:
    assert is_stuck(state, reply) is stuck


def test_the_lock_is_the_job_key_and_lock() -> None:
    ref = QueueRef("bull", "mail x{t}", "default")
    assert lock_key(ref, "42") == "bull:mail x{t}:42:lock"
    assert lock_exists(ref, "42") == ("EXISTS", "bull:mail x{t}:42:lock")


def queue(**fields: Any) -> dict[str, Any]:
    return {"slug": "mail", "counts": {"active": 3}, **fields}


def test_stuck_jobs_are_a_problem() -> None:
    assert queue_problems(queue(stuck=2)) == ["stuck jobs"]
    assert queue_problems(queue()) == []
    assert queue_problems(queue(stuck=0)) == []


@pytest.mark.parametrize(
    ("action", "sentence"),
    [
        ("move-to-failed", "Job 7 moved to failed"),
        ("move-to-wait", "Job 7 given back to the workers (waiting)"),
    ],
)
def test_moving_an_active_job_is_confirmed(action: str, sentence: str) -> None:
    with translation.override("en"):
        assert confirmation(ActionResult(action, "mail", ["7"], 1, {})) == sentence
