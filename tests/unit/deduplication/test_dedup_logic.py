"""The pure parts of deduplication keys and pause reasons: cursors, SCAN patterns, orphans,
the forms that read their parameters, and the routes that name odd ids."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from django.urls import resolve, reverse

from dashboard.deduplication.views import DedupPageForm
from dashboard.forms.actions import PauseForm
from queues.errors import BadParameter
from queues.reads.deduplication import DedupKey, _glob, parse_cursor
from queues.reads.pause_reasons import MAX_REASON


def test_a_cursor_is_the_previous_pages_next_or_nothing() -> None:
    assert parse_cursor(None) == 0
    assert parse_cursor("") == 0
    assert parse_cursor("1234") == 1234
    for bad in ("-1", "abc", "1.5", " 3"):
        with pytest.raises(BadParameter):
            parse_cursor(bad)


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("mail", "bull:mail:de:*"),
        ("a*b", "bull:a\\*b:de:*"),
        ("q?[x]", "bull:q\\?\\[x\\]:de:*"),
        ("back\\slash", "bull:back\\\\slash:de:*"),
    ],
)
def test_a_queue_name_is_a_literal_in_the_scan_pattern(name: str, pattern: str) -> None:
    # Redis's glob characters in a queue's name match only themselves.
    assert _glob(f"bull:{name}:de:") + "*" == pattern


def test_orphans_are_keys_whose_job_is_gone_or_finished() -> None:
    states = {"waiting": False, "active": False, "delayed": False, "waiting-children": False}
    states |= {"completed": True, "failed": True, "removed": True}
    for state, orphan in states.items():
        key = DedupKey("d", "1", None, state)
        assert key.orphan is orphan, state
        assert key.as_json() == {
            "id": "d",
            "jobId": "1",
            "ttl_ms": None,
            "jobState": state,
            "orphan": orphan,
        }


def test_the_page_form_bounds_limit_and_cursor() -> None:
    given = DedupPageForm({})
    assert given.is_valid() and given.cleaned_data == {"limit": 100, "cursor": ""}
    found = DedupPageForm({"limit": "20", "cursor": "55"})
    assert found.is_valid() and found.cleaned_data == {"limit": 20, "cursor": "55"}
    assert not DedupPageForm({"limit": "0"}).is_valid()
    assert not DedupPageForm({"limit": "1001"}).is_valid()
    assert not DedupPageForm({"cursor": "9" * 41}).is_valid()


def test_a_pause_reason_is_trimmed_and_capped() -> None:
    form = PauseForm({"reason": "  disk full  "})
    assert form.is_valid() and form.cleaned_data["reason"] == "disk full"
    empty = PauseForm({})
    assert empty.is_valid() and empty.cleaned_data["reason"] == ""
    assert PauseForm({"reason": "x" * MAX_REASON}).is_valid()
    assert not PauseForm({"reason": "x" * (MAX_REASON + 1)}).is_valid()


@pytest.mark.parametrize("dedup_id", ["plain", "a/b", "100%", "<b>&", "release-orphans", ".."])
def test_odd_dedup_ids_survive_the_release_route(dedup_id: str) -> None:
    path = reverse("bullpen:release-dedup", args=["q", dedup_id])
    # As the server sees it: percent-decoded once.
    match = resolve(unquote(path))
    assert (match.url_name, match.kwargs["dedup_id"]) == ("release-dedup", dedup_id)
