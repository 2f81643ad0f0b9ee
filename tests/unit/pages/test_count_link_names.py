"""The overview's count links have names that stand alone: the number, the state, the queue."""

from __future__ import annotations

from django.utils import translation

from dashboard.templatetags.bullpen_figures import spark
from dashboard.templatetags.bullpen_overview import count_label, state_cells


def test_a_count_link_says_what_it_counts() -> None:
    assert count_label(14, "failed", "documents") == "14 failed jobs in documents"
    assert count_label(1, "waiting-children", "shop") == "1 waiting children job in shop"
    assert count_label(0, "active", "shop") == "0 active jobs in shop"


def test_the_cells_carry_the_names_escaped() -> None:
    queue = {"displayName": "a<b\u202e", "counts": {"failed": 2, "waiting": 0}}
    html = state_cells(queue, "/queues/q/x/", ("waiting", "failed"))
    assert 'aria-label="0 waiting jobs in a&lt;b\\u202E"' in html
    assert 'aria-label="2 failed jobs in a&lt;b\\u202E">2</a>' in html


def test_the_cells_and_sparklines_follow_the_page_language() -> None:
    # Their words are kept between rows: a page in another language must not get them.
    queue = {"displayName": "shop", "slug": "bull:shop", "counts": {"failed": 1}}
    points = [{"completed": 0, "failed": 0}, {"completed": 2, "failed": 1}]
    with translation.override("en"):
        english = state_cells(queue, "/queues/q/bull:shop/", ("failed",)), spark(points)
    with translation.override("de"):
        german = state_cells(queue, "/queues/q/bull:shop/", ("failed",)), spark(points)
    with translation.override("en"):
        again = state_cells(queue, "/queues/q/bull:shop/", ("failed",)), spark(points)
    assert 'aria-label="1 failed job in shop"' in english[0]
    assert 'aria-label="1 Job (fehlgeschlagen) in shop"' in german[0]
    assert 'data-state-label="fehlgeschlagen"' in german[0]
    assert 'aria-label="abgeschlossen und fehlgeschlagen pro Minute"' in german[1]
    assert 'aria-label="completed and failed per minute"' in english[1]
    assert again == english
