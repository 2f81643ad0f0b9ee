"""The search's words in the page's language: the question asked before acting on matches, the
states it names, and a queue's foot. English stays word for word what the JSON API says."""

from __future__ import annotations

from itertools import combinations

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from dashboard.pages.state_labels import state_counts, state_list
from dashboard.search.match_question import match_question
from queues.search.matches import ACTION_STATES, question

pytestmark = pytest.mark.unit


def _asked(action: str) -> list[tuple[str, ...]]:
    allowed = ACTION_STATES[action]
    return [c for size in (1, 2, 3) for c in combinations(allowed, size)] + [allowed]


@pytest.mark.parametrize("action", sorted(ACTION_STATES))
@pytest.mark.parametrize("count", [1, 37])
def test_english_page_question_is_the_apis(action: str, count: int) -> None:
    with translation.override("en"):
        for states in _asked(action):
            assert match_question(action, states, count) == question(action, states, count)


def test_questions_in_german_and_french() -> None:
    with translation.override("de"):
        assert match_question("retry", ["failed"], 1234) == (
            "1.234 passende Jobs (fehlgeschlagen) erneut versuchen?"
        )
        assert match_question("remove", ["waiting", "completed"], 1) == (
            "1 passenden Job (wartend oder abgeschlossen) entfernen? "
            "Das lässt sich nicht rückgängig machen."
        )
        assert match_question("remove", ACTION_STATES["remove"], 2).startswith(
            "2 passende Jobs entfernen?"
        )
    with translation.override("fr"):
        assert match_question("promote", ["delayed"], 2) == (
            "Avancer 2 tâches correspondantes (différé) ?"
        )


def test_state_lists_and_counts() -> None:
    with translation.override("en"):
        assert state_list(["waiting", "delayed", "completed"], "or") == (
            "waiting or delayed or completed"
        )
        assert state_list(["failed", "completed"], "and") == "failed and completed"
        assert state_list(["failed"], "and") == "failed"
        assert state_counts([("failed", 12345), ("completed", 1)]) == "12,345 failed, 1 completed"
    with translation.override("de"):
        assert state_list(["failed", "completed"], "and") == "fehlgeschlagen und abgeschlossen"
        assert state_counts([("failed", 12345)]) == "12.345 fehlgeschlagen"


def test_a_queues_foot_in_german_and_english() -> None:
    context = {
        "slug": "mail",
        "scanned": 12345,
        "matched": 3,
        "by_state": [("completed", 1), ("failed", 2)],
        "actions": [],
        "states": ["failed", "completed"],
    }
    with translation.override("en"):
        html = render_to_string("bullpen/_search_group_foot.html", context)
    assert "3 matches (1 completed, 2 failed) among 12,345 jobs read" in html
    with translation.override("de"):
        html = render_to_string("bullpen/_search_group_foot.html", context)
    assert "3 Treffer (1 abgeschlossen, 2 fehlgeschlagen) unter 12.345 gelesenen Jobs" in html
