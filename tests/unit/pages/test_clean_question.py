"""The clean's question names its grace, limit and count, in the page's language."""

from __future__ import annotations

from django.utils import translation

from dashboard.bulk.clean_question import clean_question, grace_text


def test_a_grace_is_said_as_typed() -> None:
    assert grace_text(3_600_000) == "1 h"
    assert grace_text(5_400_000) == "1 h 30 min"
    assert grace_text(90_000) == "1 min 30 s"
    assert grace_text(7 * 86_400_000) == "7 d"
    assert grace_text(1) == "1 ms"
    assert grace_text(0) == "0 s"


def test_the_question_names_limit_grace_and_count() -> None:
    with translation.override("en"):
        assert clean_question("completed", 3_600_000, 1000, 37) == (
            "Remove up to 1,000 completed jobs older than 1 h? "
            "37 completed jobs are older than 1 h now. This cannot be undone."
        )
        assert clean_question("delayed", 60_000, 0, None) == (
            "Remove every delayed job older than 1 min? This cannot be undone."
        )
    with translation.override("de"):
        asked = clean_question("failed", 3_600_000, 1, 1)
        assert asked.startswith("Bis zu 1 Job") and "1 h" in asked
