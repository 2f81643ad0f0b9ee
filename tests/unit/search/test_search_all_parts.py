"""The pure parts of the search over every queue: where a query matched, the pacing of its
steps, its parameters, which queues patterns name, the text shown around a match, the question
asked before acting on matches, and the per-client places."""

from __future__ import annotations

import pytest
from django.http import QueryDict
from django.test import RequestFactory

from dashboard.forms.answer import valid
from dashboard.forms.search import MatchActionForm, SearchAllForm, query_data
from dashboard.search import slots
from dashboard.search.render import EXCERPT, excerpt
from dashboard.search.scope import matches_pattern
from queues.errors import BadParameter
from queues.reads.keys import STATES, QueueRef
from queues.search.matches import action_states, question
from queues.search.scan import parse_query
from queues.search.step_pace import Pace

JOB = {
    "id": "order-42",
    "name": "charge",
    "data": {"customer": "acme-42", "items": [{"sku": "A-1"}]},
    "failedReason": "card declined for ACME-42",
}


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ("acme-42", "data"),  # the data comes before the failed reason
        ("declined", "failedReason"),
        ("CHARGE", "name"),
        ("id:order", "id"),
        ("reason:card", "failedReason"),
        ("data.customer = acme-42", "data.customer"),
        ("data.items.0.sku = A-1", "data.items.0.sku"),
        ("data.customer = acme-4", None),
        ("nowhere", None),
    ],
)
def test_where_a_query_matched(raw: str, field: str | None) -> None:
    query = parse_query(raw)
    assert query.matched_in(JOB) == field
    assert query.matches(JOB) is (field is not None)


def test_steps_shrink_for_costly_jobs_and_grow_back() -> None:
    pace = Pace(target_s=0.003)
    assert pace.size == 50
    pace.took(0.010, 50)  # 200 µs a job: 15 fit the target, never fewer than the least
    assert pace.size == pace.least == 20
    for _ in range(30):
        pace.took(0.0003, 30)  # 10 µs a job: 300 would fit; at most the most
    assert pace.size == pace.most == 200
    assert pace.longest_s == 0.010
    pace.took(0.0, 0)  # an empty step teaches nothing
    assert pace.size == 200


def test_search_parameters() -> None:
    def cleaned(query: str) -> dict[str, object]:
        return valid(SearchAllForm(query_data(QueryDict(query), "state", "queues"))).cleaned_data

    found = cleaned("q=x&state=failed&state=delayed,failed&queues=a-*,+b&queues=c")
    assert found["state"] == ["failed", "delayed"]
    assert found["queues"] == ["a-*", "b", "c"]
    assert found["render"] is False and found["budget"] is None
    assert cleaned("q=x")["state"] == [] and cleaned("q=x&render=html")["render"] is True
    for query, message in [
        ("q=", "Type something to search for"),
        ("q=x&state=asleep", "state: unknown 'asleep'"),
        ("q=x&queues=" + ",".join(str(i) for i in range(101)), "queues: at most 100 of them"),
        ("q=x&budget=0", "budget must be between 1 and 1000000"),
    ]:
        with pytest.raises(BadParameter, match=message):
            cleaned(query)
    with pytest.raises(BadParameter, match="q is required"):
        valid(MatchActionForm({"state": ["failed"]}))


def test_queue_patterns() -> None:
    ref = QueueRef("bull", "tenant-7-mail")
    assert matches_pattern(ref, [])
    assert matches_pattern(ref, ["tenant-7-mail"])
    assert matches_pattern(ref, ["tenant-*"]) and matches_pattern(ref, ["*-mail"])
    assert not matches_pattern(ref, ["tenant-7"]) and not matches_pattern(ref, ["Tenant-*"])
    other = QueueRef("other", "mail")
    assert matches_pattern(other, ["other:mail"]) and matches_pattern(other, ["mail"])


def test_the_text_around_a_match() -> None:
    assert excerpt("short  text\nhere", "text") == "short text here"
    long = "a" * 300 + "NEEDLE" + "b" * 300
    shown = excerpt(long, "needle")
    assert "NEEDLE" in shown and shown.startswith("…") and shown.endswith("…")
    assert len(shown) == EXCERPT + 2
    assert excerpt(long, "absent").startswith("a" * 10) and not excerpt(long, "").startswith("…")


def test_what_each_action_acts_on_and_asks() -> None:
    assert action_states("retry", []) == ("failed",)
    assert action_states("retry", ["completed", "failed", "completed"]) == ("completed", "failed")
    assert action_states("promote", []) == ("delayed",)
    assert "active" not in action_states("remove", []) and len(action_states("remove", [])) == 7
    with pytest.raises(BadParameter, match="retry acts only on jobs that are: failed, completed"):
        action_states("retry", ["waiting"])
    with pytest.raises(BadParameter, match="remove acts only"):
        action_states("remove", ["active"])
    with pytest.raises(BadParameter, match="Unknown action"):
        action_states("clean", [])
    assert question("retry", ["failed"], 37) == "Retry 37 matching failed jobs?"
    assert question("promote", ["delayed"], 1) == "Promote 1 matching delayed job?"
    assert question("remove", action_states("remove", []), 2) == (
        "Remove 2 matching jobs? This cannot be undone."
    )
    assert question("retry", ["failed", "completed"], 3) == (
        "Retry 3 matching failed or completed jobs?"
    )
    assert set(STATES) - {"active"} == set(action_states("remove", []))


def test_two_places_a_client() -> None:
    request = RequestFactory().get("/", REMOTE_ADDR="10.1.2.3")
    key = slots.client_key(request)
    assert key == "addr:10.1.2.3"
    first, second = slots.take(key), slots.take(key)
    assert first is not None and second is not None
    assert slots.take(key) is None
    elsewhere = slots.take("addr:10.9.9.9")  # another client's places are its own
    assert elsewhere is not None and slots.running(key) == 2
    elsewhere.release()
    first.release()
    first.release()  # once only
    assert slots.running(key) == 1
    third = slots.take(key)
    assert third is not None
    second.release()
    third.release()
    assert slots.running(key) == 0
