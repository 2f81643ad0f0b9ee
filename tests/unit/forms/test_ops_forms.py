"""The forms of rescheduling, global concurrency and rate limit, and a forced obliterate; and
what a page confirms after each."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms

from dashboard.forms.actions import (
    ConcurrencyForm,
    ObliterateForm,
    RateLimitForm,
    RescheduleForm,
)
from dashboard.forms.answer import valid
from dashboard.pages.landing import confirmation
from queues.actions.result import ActionResult
from queues.errors import BadParameter


def refusal(form: forms.Form) -> str:
    with pytest.raises(BadParameter) as refused:
        valid(form)
    return str(refused.value)


def cleaned(form: forms.Form) -> dict[str, Any]:
    return valid(form).cleaned_data


def test_a_new_delay_is_typed_or_given_in_ms() -> None:
    assert cleaned(RescheduleForm({"delay": "1h30m"}))["delay_ms"] == 5_400_000
    assert cleaned(RescheduleForm({"delay_ms": "250"}))["delay_ms"] == 250
    assert cleaned(RescheduleForm({"delay_ms": 0}))["delay_ms"] == 0
    assert refusal(RescheduleForm({})).startswith("delay_ms is required")
    assert refusal(RescheduleForm({"delay": "1 h", "delay_ms": 5})) == (
        "Give delay or delay_ms, not both"
    )
    assert refusal(RescheduleForm({"delay": "%(name)s later"})).startswith(
        "delay: '%(name)s later' is not a duration"
    )
    assert refusal(RescheduleForm({"delay_ms": True})).startswith("delay_ms must be a whole")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"concurrency": "4"}, 4),
        ({"concurrency": 1}, 1),
        ({"concurrency": ""}, None),
        ({"concurrency": None}, None),  # JSON null
    ],
)
def test_concurrency_given_empty_removes_it(given: dict[str, Any], expected: int | None) -> None:
    assert cleaned(ConcurrencyForm(given))["concurrency"] == expected


def test_concurrency_must_be_given_and_bounded() -> None:
    assert refusal(ConcurrencyForm({})).startswith("concurrency is required")
    assert refusal(ConcurrencyForm({"concurrency": "0"})) == (
        "concurrency must be between 1 and 1000000"
    )
    assert refusal(ConcurrencyForm({"concurrency": 2.5})).startswith("concurrency must be a whole")


def test_a_rate_limit_is_both_numbers_or_neither() -> None:
    assert cleaned(RateLimitForm({"max": "10", "duration_ms": "1000"})) == {
        "max": 10,
        "duration_ms": 1000,
    }
    assert cleaned(RateLimitForm({"max": "", "duration_ms": ""})) == {
        "max": None,
        "duration_ms": None,
    }
    assert refusal(RateLimitForm({})).startswith("max and duration_ms are required")
    assert refusal(RateLimitForm({"max": "10"})).startswith("Give max and duration_ms together")
    assert refusal(RateLimitForm({"max": "", "duration_ms": "5"})).startswith("Give max and")
    assert refusal(RateLimitForm({"max": "0", "duration_ms": "5"})).startswith(
        "max must be between 1 and"
    )


@pytest.mark.parametrize(
    ("given", "force"),
    [
        ({}, False),
        ({"force": "1"}, True),
        ({"force": "on"}, True),
        ({"force": True}, True),
        ({"force": 1}, True),
        ({"force": "0"}, False),
        ({"force": "false"}, False),
        ({"force": False}, False),
        ({"force": 0}, False),
    ],
)
def test_force_is_a_yes_or_a_no(given: dict[str, Any], force: bool) -> None:
    assert cleaned(ObliterateForm({"confirm": "q", **given}))["force"] is force


@pytest.mark.parametrize("odd", ["maybe", "2", 2, ["1"]])
def test_force_is_nothing_else(odd: Any) -> None:
    assert refusal(ObliterateForm({"force": odd})) == "force must be 1 or 0"


@pytest.mark.parametrize(
    ("result", "text"),
    [
        (ActionResult("reschedule", "mail", ["42"], 1, {"delayMs": 5}), "Job 42 rescheduled"),
        (
            ActionResult("remove-unprocessed-children", "mail", ["7"], 3, {"kept": 0}),
            "Job 7: 3 unprocessed children removed",
        ),
        (
            ActionResult("remove-unprocessed-children", "mail", ["7"], 1, {"kept": 1}),
            "Job 7: 1 unprocessed child removed",
        ),
        (
            ActionResult("concurrency", "mail", detail={"concurrency": 4}),
            "Queue mail: global concurrency set to 4",
        ),
        (
            ActionResult("concurrency", "mail", detail={"concurrency": None}),
            "Queue mail: global concurrency removed",
        ),
        (
            ActionResult("rate-limit", "mail", detail={"rateLimit": {"max": 5, "duration": 1000}}),
            "Queue mail: rate limit set to 5 per 1000 ms",
        ),
        (
            ActionResult("rate-limit", "mail", detail={"rateLimit": None}),
            "Queue mail: rate limit removed",
        ),
        (
            ActionResult("rate-limit-release", "mail", count=1, detail={"released": True}),
            "Queue mail: rate limit released",
        ),
        (
            ActionResult("rate-limit-release", "mail", detail={"released": False}),
            "Queue mail: no rate limit was in force",
        ),
        (ActionResult("obliterate", "mail", detail={"force": True}), "Queue mail obliterated"),
    ],
)
def test_what_the_page_confirms(result: ActionResult, text: str) -> None:
    assert confirmation(result) == text
