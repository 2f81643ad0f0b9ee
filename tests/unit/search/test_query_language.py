"""The search's query language: precedence, terms, comparisons, times, the one-clause forms of
old, and errors that say where and what was expected."""

from __future__ import annotations

from typing import Any

import pytest

from queues.errors import BadParameter
from queues.search.query import MAX_DEPTH, MAX_TERMS, QuerySyntaxError, parse

NOW = 1_800_000_000_000
JOB: dict[str, Any] = {
    "id": "order-42",
    "name": "send-email",
    "data": {"userId": 42, "plan": "Pro", "amount": 19.5, "tags": ["vip"], "note": None},
    "opts": {"attempts": 3, "priority": 2},
    "returnvalue": {"sent": True, "via": "smtp-eu"},
    "failedReason": "Timeout after 3000 ms",
    "attemptsMade": 2,
    "priority": 2,
    "progress": 40,
    "timestamp": NOW - 30 * 60_000,  # added half an hour ago
    "processedOn": NOW - 10 * 60_000,
    "finishedOn": None,
    "logs": ["connecting to smtp", "Retrying after ECONNRESET"],
}


def holds(raw: str, job: dict[str, Any] = JOB) -> bool:
    return parse(raw, NOW).matches(job)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("name:send AND reason:timeout", True),
        ("name:send reason:timeout", True),  # a space is AND
        ("name:send AND reason:refused", False),
        ("name:nope OR reason:timeout", True),
        ("NOT name:send", False),
        ("NOT NOT name:send", True),
        ("name:nope OR name:send AND reason:refused", False),  # AND binds tighter
        ("(name:nope OR name:send) AND reason:timeout", True),
        ("name:nope OR (name:send AND NOT reason:refused)", True),
        ('"after 3000"', True),
        ('"3000 after"', False),
        ("id:ORDER", True),
        ("id=order-42", True),
        ("id=order", False),
        ("name!=send-email", False),
        ("logs:econnreset", True),
        ("logs:absent", False),
    ],
)
def test_boolean_queries(raw: str, expected: bool) -> None:
    assert holds(raw) is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("data.userId = 42", True),
        ("data.userId:4", True),  # contains, in the value's text
        ("data.plan:pro", True),
        ("data.plan = pro", False),  # equality is exact
        ("data.plan != Basic", True),
        ("data.missing != 1", True),
        ("data.amount > 19", True),
        ("data.amount >= 19.5", True),
        ("data.amount < 19.5", False),
        ("data.plan > 1", False),  # text is not a number
        ("data.note = null", True),
        ("data.tags.0 = vip", True),
        ("opts.attempts = 3", True),
        ("returnvalue.via:EU", True),
        ("returnvalue.sent = true", True),
        ("attemptsMade >= 2", True),
        ("attemptsMade > 2", False),
        ("priority = 2", True),
        ("priority:2", True),
        ("progress < 50", True),
        ("progress != 40", False),
    ],
)
def test_comparisons(raw: str, expected: bool) -> None:
    assert holds(raw) is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("timestamp > now-1h", True),
        ("timestamp > now-15m", False),
        ("timestamp >= now-1800s", True),
        ("processedOn > now-1d", True),
        ("finishedOn > now-1d", False),  # not finished: no time to compare
        ("timestamp < 2030-01-01", True),
        ("timestamp < 2020-01-01T00:00:00Z", False),
        ("timestamp > 2027-01-15T08:00:00+01:00", True),
        ("timestamp < now", True),
    ],
)
def test_time_ranges(raw: str, expected: bool) -> None:
    assert holds(raw) is expected


@pytest.mark.parametrize(
    ("raw", "kind", "text"),
    [
        ("card declined", "text", "card declined"),  # bare words: one phrase
        ("name:send email", "name", "send email"),
        ("NAME: Send", "name", "send"),
        ("reason:connect ECONNREFUSED 1.2.3.4", "reason", "connect econnrefused 1.2.3.4"),
        ("error: timeout", "text", "error: timeout"),  # no field called error: text
        ("http://x/y", "text", "http://x/y"),
        ("not json", "text", "not json"),
    ],
)
def test_one_clause_queries_keep_their_meaning(raw: str, kind: str, text: str) -> None:
    query = parse(raw, NOW)
    assert (query.kind, query.text) == (kind, text)


def test_data_equality_of_old_takes_the_rest() -> None:
    query = parse("data.note = hello world", NOW)
    assert (query.kind, query.path, query.value) == ("field", ("note",), "hello world")
    # Two field terms are AND, never one value.
    assert parse("data.userId = 42 data.plan = Pro", NOW).kind == "expression"
    assert holds("data.userId = 42 data.plan = Pro")
    assert not holds("name:send data.plan = Basic")


def test_where_a_compound_query_matched() -> None:
    assert parse("reason:timeout AND name:send", NOW).matched_in(JOB) == "failedReason"
    assert parse("NOT name:nope", NOW).matched_in(JOB) == "name"
    assert parse("name:nope OR data.plan:pro", NOW).matched_in(JOB) == "data.plan"
    assert parse("(x OR y) AND NOT reason:timeout", NOW).matched_in(JOB) is None
    assert parse("logs:smtp AND data.userId = 42", NOW).needs_logs
    assert parse("data.a = 1 OR opts.b:x", NOW).json_roots == {"data", "opts"}


@pytest.mark.parametrize(
    ("raw", "position", "expected"),
    [
        ("(name:a", 8, "')'"),
        ("name:a)", 7, "AND, OR or the end of the query"),
        ("name:a AND", 11, "a term, NOT or '('"),
        ("OR x", 1, "a term, NOT or '('"),
        ('"open phrase', 13, "a closing quote"),
        ("timestamp > yesterday", 13, "now, now-<N>s|m|h|d or an ISO date"),
        ("timestamp > now-5y", 13, "now, now-<N>s|m|h|d or an ISO date"),
        ("attemptsMade > many", 16, "a number"),
        ("data.amount >= 1e999", 16, "a number"),
        ("logs=x", 5, "one of : after logs"),
        ("priority >", 11, "a value after priority>"),
    ],
)
def test_errors_say_where_and_what(raw: str, position: int, expected: str) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        parse(raw, NOW)
    assert (caught.value.position + 1, caught.value.expected) == (position, expected)
    assert f"expected {expected} at character {position}" in str(caught.value)


def test_hostile_input_is_refused_quickly() -> None:
    for raw in ("(" * 10_000 + "x" + ")" * 10_000, "x" * 1_000_000, "NOT " * 5000 + "x"):
        with pytest.raises(QuerySyntaxError, match="too long"):
            parse(raw, NOW)
    with pytest.raises(QuerySyntaxError, match="too deep") as deep:
        parse("(" * (MAX_DEPTH + 1) + "x" + ")" * (MAX_DEPTH + 1), NOW)
    assert deep.value.position == MAX_DEPTH
    with pytest.raises(QuerySyntaxError, match="too deep"):
        parse("NOT " * (MAX_DEPTH + 1) + "x", NOW)
    nested = "(" * MAX_DEPTH + "name:send" + ")" * MAX_DEPTH
    assert holds(nested)
    with pytest.raises(QuerySyntaxError, match="too many terms"):
        parse(" OR ".join(["x"] * (MAX_TERMS + 1)), NOW)
    for raw in ("", "   \n"):
        with pytest.raises(BadParameter, match="Type something"):
            parse(raw, NOW)


def test_unicode() -> None:
    job = {**JOB, "name": "Écrire-Ω", "data": {"città": "Zürich 🚀"}}
    assert holds("name:écrire", job)
    assert holds("data.città:ZÜRICH", job)
    assert holds('"zürich 🚀"', job)
    assert not holds("NOT 🚀", job)
    # Digits of other scripts are neither list indexes nor relative times.
    assert not holds("data.tags.\u0660 = vip", job)
    with pytest.raises(QuerySyntaxError):
        parse("timestamp > now-\u0663h", NOW)
    with pytest.raises(QuerySyntaxError, match="closing quote"):
        parse('name:"Ω', NOW)
