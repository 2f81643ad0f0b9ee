"""The confirmation table: each action's sentence, made from what the action did, and the
plain "Done" for an action whose result lacks what its sentence names."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import translation

from dashboard.pages.confirmations import CONFIRMATIONS, confirmation
from queues.actions.result import ActionResult


def said(action: str, jobs: list[str] | None = None, count: int = 0, **detail: Any) -> str:
    return confirmation(ActionResult(action, "shop", jobs or [], count, detail))


@pytest.mark.parametrize(
    ("result", "sentence"),
    [
        (("retry", ["7"], 0, {}), "Job 7 retried"),
        (
            ("retry", ["7"], 0, {"resetAttempts": True, "attempts": 3}),
            "Job 7 retried with fresh attempts: up to 3",
        ),
        (("remove", ["7"], 0, {}), "Job 7 removed"),
        (("bulk-retry", [], 1, {}), "1 job retried"),
        (("remove-group", [], 3, {"results": {"9": "gone"}}), "3 jobs removed, 1 refused"),
        (("pause", [], 0, {}), "Queue shop paused"),
        (("empty", [], 2, {}), "Queue shop emptied: 2 jobs removed"),
        (("clean", [], 1, {"state": "completed"}), "1 job cleaned from completed"),
        (("concurrency", [], 0, {"concurrency": 4}), "Queue shop: global concurrency set to 4"),
        (("pause-all", [], 2, {"skipped": ["mail"]}), "2 queues paused; read-only, skipped: mail"),
        (
            ("group-retry", [], 5, {"group": "t1", "queues": ["a", "b"]}),
            "Group t1: retrying 5 jobs failed in 2 queues",
        ),
        (
            ("upsert-scheduler", [], 0, {"scheduler": "nightly", "created": True}),
            "Job scheduler nightly created",
        ),
        (
            ("drop-completed-dead-letters", [], 1, {}),
            "1 dead letter dropped: its original completed",
        ),
        (
            ("silence-alert", [], 1, {"rule": "waiting", "minutes": 60}),
            "Alert “waiting” on shop silenced for 60 min",
        ),
        (
            ("unsilence-alert", [], 1, {"rule": "failure_rate_percent"}),
            "Alert “failure rate” on shop unsilenced",
        ),
        (("acknowledge-alert", [], 1, {"rule": "delayed"}), "Alert “delayed” on shop acknowledged"),
    ],
)
def test_each_action_says_what_it_did(result: tuple[Any, ...], sentence: str) -> None:
    action, jobs, count, detail = result
    with translation.override("en"):
        assert said(action, jobs, count, **detail) == sentence


def test_without_the_job_its_sentence_names_the_page_says_done() -> None:
    with translation.override("en"):
        assert said("retry") == "Done: retry"
        assert said("reschedule") == "Done: reschedule"
        assert said("no-such-action") == "Done: no-such-action"


def test_sentences_are_in_the_page_language() -> None:
    with translation.override("de"):
        assert said("remove", ["7"]) != "Job 7 removed"


def test_every_entry_says_something_for_a_job_of_the_queue() -> None:
    with translation.override("en"):
        for action in CONFIRMATIONS:
            text = said(action, ["7"], 1)
            assert text and not text.startswith("Done:"), action
