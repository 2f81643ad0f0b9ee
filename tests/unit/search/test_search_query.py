"""Search queries as typed, and which jobs each form matches."""

from __future__ import annotations

from typing import Any

import pytest

from queues.errors import BadParameter
from queues.search.scan import parse_query

JOB: dict[str, Any] = {
    "id": "order-42",
    "name": "Send-Email",
    "data": {"userId": 42, "user": {"id": "a"}, "tags": ["vip", "eu"], "note": "Héllo"},
    "failedReason": "Timeout after 3000 ms",
}


def test_query_forms() -> None:
    assert parse_query("data.userId = 42").path == ("userId",)
    assert parse_query('data.user.id == "a"').value == "a"
    assert parse_query("name:Send").kind == "name"
    assert parse_query("reason:Timeout").text == "timeout"
    assert parse_query("hello").kind == "text"


def test_an_empty_query_is_refused() -> None:
    for raw in ("", "   "):
        with pytest.raises(BadParameter, match="Type something"):
            parse_query(raw)


@pytest.mark.parametrize(
    ("raw", "matches"),
    [
        ("data.userId = 42", True),
        ('data.userId = "42"', True),  # the text of a number matches it too
        ("data.userId == 7", False),
        ("data.user.id = 'a'", True),
        ("data.tags.0 = vip", True),
        ("data.tags.5 = vip", False),
        ("data.missing.path = 1", False),
        ("name:send", True),
        ("NAME: email", True),
        ("reason:timeout", True),
        ("reason:refused", False),
        ("id:ORDER", True),
        ("héllo", True),  # plain text looks in the data
        ("3000 MS", True),  # ... and in the failed reason
        ("absent", False),
    ],
)
def test_what_each_form_matches(raw: str, matches: bool) -> None:
    assert parse_query(raw).matches(JOB) is matches


def test_plain_text_in_data_stored_as_text() -> None:
    job = {"id": "1", "name": None, "data": "raw text, not JSON", "failedReason": None}
    assert parse_query("not json").matches(job)  # bare words: one phrase, as ever
    assert not parse_query("name:x").matches(job)
