"""The request forms on their own: coercion, bounds, defaults and the message of each 400."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django import forms
from django.http import QueryDict
from django.test import RequestFactory, override_settings

from dashboard.forms.actions import (
    AddJobForm,
    BulkForm,
    CleanForm,
    GroupActionForm,
    PriorityForm,
    UpdateDataForm,
)
from dashboard.forms.answer import action_input, valid
from dashboard.forms.reads import JobPageForm, OverviewForm, SearchForm, job_page_params
from queues.errors import BadParameter


def refusal(form: forms.Form) -> str:
    with pytest.raises(BadParameter) as refused:
        valid(form)
    return str(refused.value)


def cleaned(form: forms.Form) -> dict[str, Any]:
    return valid(form).cleaned_data


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, "priority is required"),
        ({"priority": ""}, "priority is required"),
        ({"priority": "soon"}, "priority must be a whole number between 0 and 2097152"),
        ({"priority": True}, "priority must be a whole number between 0 and 2097152"),
        ({"priority": 1.5}, "priority must be a whole number between 0 and 2097152"),
        ({"priority": "-1"}, "priority must be between 0 and 2097152"),
        ({"priority": "9" * 30}, "priority must be between 0 and 2097152"),
    ],
)
def test_whole_numbers_say_what_is_accepted(given: dict[str, Any], message: str) -> None:
    assert refusal(PriorityForm(given)) == message


def test_whole_numbers_come_as_text_or_json_numbers() -> None:
    assert cleaned(PriorityForm({"priority": " 7 "}))["priority"] == 7
    assert cleaned(PriorityForm({"priority": 7}))["priority"] == 7
    assert cleaned(PriorityForm({"priority": 7.0}))["priority"] == 7


def test_a_job_list_takes_its_defaults_from_the_page_and_the_settings(
    bullpen_settings: dict[str, Any],
) -> None:
    assert job_page_params(QueryDict(""), "failed") == ("failed", 1, 50, "desc")
    with override_settings(BULLPEN={**bullpen_settings, "DEFAULT_PAGE_SIZE": 20}):
        found = cleaned(JobPageForm(QueryDict("state=delayed&page=3&order=asc")))
    assert found == {"state": "delayed", "page": 3, "per_page": 20, "order": "asc"}
    # The fast path hands a plain dict.
    assert job_page_params({"page": "2", "per_page": "100"})[1:3] == (2, 100)
    assert refusal(JobPageForm(QueryDict("page=abc"))) == "page must be a whole number"


def test_search_parameters() -> None:
    assert cleaned(SearchForm(QueryDict("q=x"))) == {
        "state": "failed",
        "q": "x",
        "render": "",
        "budget": None,
        "max_matches": None,
        "format": "",
        "columns": [],
    }
    assert refusal(SearchForm(QueryDict("state=nope"))) == "Unknown state 'nope'"
    assert refusal(SearchForm(QueryDict("render=table"))) == "render must be 'row' or left out"
    assert refusal(SearchForm(QueryDict("q="))) == "Type something to search for"
    assert refusal(SearchForm(QueryDict("q=" + "x" * 2001))) == (
        "q is too long (at most 2000 characters)"
    )
    assert refusal(SearchForm(QueryDict("budget=0"))) == "budget must be between 1 and 1000000"


def test_what_a_client_typed_is_quoted_never_read_as_a_format() -> None:
    message = refusal(CleanForm({"grace": "50%(name)s %"}))
    assert message.startswith("grace: '50%(name)s %' is not a duration")
    assert refusal(SearchForm(QueryDict("state=%25s"))) == "Unknown state '%s'"


def test_grace_is_typed_or_given_in_ms_not_both() -> None:
    assert cleaned(CleanForm({}))["grace"] == 3_600_000
    assert cleaned(CleanForm({"grace": "1h30m"}))["grace"] == 5_400_000
    assert cleaned(CleanForm({"grace_ms": "5"}))["grace"] == 5
    assert refusal(CleanForm({"grace": "1 h", "grace_ms": "5"})) == (
        "Give grace or grace_ms, not both"
    )
    assert refusal(CleanForm({"limit": "-1"})) == "limit must be between 0 and 1000000000"


@pytest.mark.parametrize("word", ["hello", "nancy", "tru", "{"])
def test_job_data_as_text_must_be_json(word: str) -> None:
    expected = 'data is not valid JSON (text needs quotes, as in "hello")'
    assert refusal(AddJobForm({"name": "n", "data": word})) == expected
    assert refusal(UpdateDataForm({"data": word})) == expected


def test_job_data_as_json() -> None:
    assert cleaned(AddJobForm({"name": "n"}))["data"] == {}
    assert cleaned(AddJobForm({"name": "n", "data": '"hello"'}))["data"] == "hello"
    assert cleaned(AddJobForm({"name": "n", "data": "null"}))["data"] is None
    assert cleaned(UpdateDataForm({"data": {"a": [1]}}))["data"] == {"a": [1]}
    assert cleaned(UpdateDataForm({"data": "[1, 2]"}))["data"] == [1, 2]
    assert refusal(UpdateDataForm({})) == "data is required (the new job data, as JSON)"


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ("[1]", "opts must be a JSON object"),
        ('{"repeat": {}}', "Unsupported options: repeat"),
        ('{"jobId": "12"}', "jobId must be a string that is not a number and has no ':'"),
        ('{"delay": "soon"}', "delay must be a whole number between 0 and 315360000000"),
        ('{"attempts": 0}', "attempts must be a whole number between 1 and 1000000"),
        ('{"lifo": 1}', "lifo must be true or false"),
        (
            '{"backoff": {"delay": 5}}',
            'backoff must be a delay in ms or {"type": ..., "delay": ms}',
        ),
        (
            '{"removeOnFail": {"days": 1}}',
            'removeOnFail must be true, false, a count or {"count", "age"}',
        ),
    ],
)
def test_added_job_options_are_checked(opts: str, message: str) -> None:
    assert refusal(AddJobForm({"name": "n", "opts": opts})) == message


def test_added_job_options_that_workers_can_use() -> None:
    opts = {"delay": 5, "backoff": {"type": "fixed", "delay": 10}, "removeOnComplete": {"count": 3}}
    assert cleaned(AddJobForm({"name": "n", "opts": json.dumps(opts)}))["opts"] == opts
    assert cleaned(AddJobForm({"name": "n", "opts": ""}))["opts"] == {}
    assert refusal(AddJobForm({"data": "{}"})) == "A job needs a name"


def test_bulk_ids() -> None:
    assert cleaned(BulkForm({"action": "retry", "ids": "1,2,,3"}))["ids"] == ["1", "2", "3"]
    assert cleaned(BulkForm({"action": "remove", "ids": ["a", "b"]}))["ids"] == ["a", "b"]
    assert refusal(BulkForm({"action": "zap", "ids": "1"})) == (
        "action must be one of: retry, remove, promote"
    )
    assert refusal(BulkForm({"action": "retry"})) == "ids must be a non-empty list of job ids"
    assert refusal(BulkForm({"action": "retry", "ids": [1]})) == (
        "ids must be a non-empty list of job ids"
    )
    assert refusal(BulkForm({"action": "retry", "ids": ["x" * 1025]})) == (
        "a job id has at most 1024 characters"
    )
    assert refusal(BulkForm({"action": "retry", "ids": [str(n) for n in range(1001)]})) == (
        "at most 1000 jobs at once"
    )


def test_a_failure_group_is_named_by_its_signature() -> None:
    assert refusal(GroupActionForm({})) == "signature is required"
    assert refusal(GroupActionForm({"signature": ""})) == "signature is required"
    assert refusal(GroupActionForm({"signature": "x" * 10_001})) == (
        "signature is too long (at most 10000 characters)"
    )


def test_the_overview_query_has_defaults_and_bounds() -> None:
    form = OverviewForm(QueryDict(""))
    assert form.is_valid()
    query = form.query()
    assert (query.text, query.problems, query.group, query.within) == ("", False, "", None)
    assert (query.sort, query.page, query.per_page, query.delimiter) == ("name", 1, 100, "-")
    given = OverviewForm(QueryDict("q=t00&problems=1&group=head&within=&sort=-failed&page=3"))
    assert given.is_valid()
    chosen = given.query()
    assert (chosen.text, chosen.problems, chosen.group, chosen.within) == ("t00", True, "head", "")
    assert (chosen.sort_key, chosen.descending, chosen.page) == ("failed", True, 3)
    assert refusal(OverviewForm(QueryDict("sort=size"))) == (
        "sort must be name or a state, with - in front for the other way round"
    )
    assert refusal(OverviewForm(QueryDict("group=tenant"))) == (
        "group must be one of: head, tail, prefix, connection (or left out)"
    )
    assert refusal(OverviewForm(QueryDict("per_page=501"))) == "per_page must be between 1 and 500"
    assert refusal(OverviewForm(QueryDict("q=" + "x" * 201))) == (
        "q is too long (at most 200 characters)"
    )


def test_action_input_from_a_query_a_form_body_or_a_json_body() -> None:
    factory = RequestFactory()
    form_body = factory.post("/?state=failed", {"ids": ["1", "2"], "name": ["a", "b"]})
    assert action_input(form_body) == {"state": "failed", "ids": ["1", "2"], "name": "b"}
    json_body = factory.post("/?a=1", {"a": 2, "ids": "1,2"}, content_type="application/json")
    assert action_input(json_body) == {"a": 2, "ids": "1,2"}
    for body, message in (
        ("{", "The body is not valid JSON"),
        ("[1]", "The JSON body must be an object"),
    ):
        request = factory.post("/", body, content_type="application/json")
        with pytest.raises(BadParameter, match=message.replace(" ", ".")):
            action_input(request)
