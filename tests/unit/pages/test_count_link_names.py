"""The overview's count links have names that stand alone: the number, the state, the queue."""

from __future__ import annotations

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
