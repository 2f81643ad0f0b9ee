"""A job scheduler's settings as the dashboard takes them, and what a page confirms."""

from __future__ import annotations

from typing import Any

import pytest

from dashboard.forms.answer import valid
from dashboard.forms.schedulers import SchedulerForm
from dashboard.pages.landing import confirmation
from queues.actions.result import ActionResult
from queues.errors import BadParameter


def repeat(given: dict[str, Any]) -> dict[str, Any]:
    return valid(SchedulerForm(given)).repeat_options()


def test_every_as_typed_or_in_ms_and_a_pattern_in_a_time_zone() -> None:
    assert repeat({"id": "s", "every": "5 min"}) == {"every": 300_000}
    assert repeat({"id": "s", "every": "1500", "limit": "3"}) == {"every": 1500, "limit": 3}
    assert repeat({"id": "s", "pattern": "0 9 * * 1-5", "tz": "Europe/Paris"}) == {
        "pattern": "0 9 * * 1-5",
        "tz": "Europe/Paris",
    }
    # Six fields: seconds first, as Node's cron parser reads them.
    assert repeat({"id": "s", "pattern": "*/10 * * * * *"}) == {"pattern": "*/10 * * * * *"}


def test_dates_are_ms_or_iso_text_utc_unless_a_zone_is_given() -> None:
    found = repeat(
        {"id": "s", "every": "1 h", "start_date": "2027-01-01T00:00", "end_date": 1798848000000}
    )
    assert found["startDate"] == 1798761600000 and found["endDate"] == 1798848000000
    paris = repeat({"id": "s", "every": "1 h", "start_date": "2027-01-01T01:00+01:00"})
    assert paris["startDate"] == 1798761600000


def test_the_job_name_defaults_to_the_id_and_data_to_an_empty_object() -> None:
    found = valid(SchedulerForm({"id": " nightly ", "every": "1 d"})).cleaned_data
    assert (found["id"], found["name"], found["data"], found["opts"]) == (
        "nightly",
        "nightly",
        {},
        {},
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"id": "s", "every": "1 h", "opts": '{"repeat": {}}'}, "the scheduler sets repeat"),
        ({"id": "s", "every": "1 h", "opts": "[1]"}, "opts must be a JSON object"),
        ({"id": "s", "pattern": "61 * * * *"}, "not a cron pattern"),
        ({"id": "s", "every": "1 h", "data": "hello"}, "data is not valid JSON"),
        ({"id": "s", "every": "1 h", "end_date": "2020-01-01"}, "end_date is past"),
    ],
)
def test_refusals_say_what_is_wrong(given: dict[str, Any], message: str) -> None:
    with pytest.raises(BadParameter, match=message):
        valid(SchedulerForm(given))


def test_pages_confirm_what_was_done() -> None:
    made = ActionResult("upsert-scheduler", "mail", [], 1, {"scheduler": "d", "created": True})
    assert confirmation(made) == "Job scheduler d created"
    made.detail["created"] = False
    assert confirmation(made) == "Job scheduler d updated"
    ran = ActionResult("run-scheduler", "mail", ["42"], 1, {"scheduler": "d"})
    assert confirmation(ran) == "Job scheduler d ran now: job 42 added"
