"""The markup of the search results page's streamed parts: a queue's group, a match's row, a
group's foot with what was found and what may be done with it. Rendered by the server into the
stream's lines; the page only inserts them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from django.template.loader import render_to_string
from django.urls import reverse

from queues.postgres.store_actions import supported
from queues.reads.keys import QueueRef
from queues.search.matches import ACTION_STATES

EXCERPT = 120  # characters of a matched field shown around the match


def excerpt(text: str, needle: str) -> str:
    """Up to ``EXCERPT`` characters of ``text`` around the first ``needle`` (lower case)."""
    text = " ".join(text.split())
    at = text.lower().find(needle) if needle else -1
    if len(text) <= EXCERPT:
        return text
    start = max(0, min(at - EXCERPT // 3, len(text) - EXCERPT)) if at >= 0 else 0
    cut = text[start : start + EXCERPT]
    return ("…" if start else "") + cut + ("…" if start + EXCERPT < len(text) else "")


def group_html(ref: QueueRef) -> str:
    return render_to_string("bullpen/_search_group.html", {"slug": ref.slug})


def skipped_html(ref: QueueRef, error: str) -> str:
    return render_to_string("bullpen/_search_skipped.html", {"slug": ref.slug, "error": error})


def row_html(ref: QueueRef, state: str, job: dict[str, Any], match: dict[str, str]) -> str:
    return render_to_string(
        "bullpen/_search_row.html",
        {"slug": ref.slug, "state": state, "job": job, "match": match},
    )


def match_actions(ref: QueueRef, by_state: dict[str, int], query: str) -> list[dict[str, Any]]:
    """The actions on a queue's matches its foot offers: each with the states it covers, the
    matches found there, and the address of its count (which also leads to the action)."""
    offered: list[dict[str, Any]] = []
    if "retry-matches" not in supported(ref):
        return offered
    for action in ("retry", "promote", "remove"):
        states = [s for s in ACTION_STATES[action] if by_state.get(s)]
        if not states:
            continue
        params: list[tuple[str, str]] = [("q", query), *[("state", s) for s in states]]
        url = reverse("bullpen:search-action", args=[ref.slug, action])
        offered.append(
            {
                "action": action,
                "states": states,
                "found": sum(by_state[s] for s in states),
                "url": f"{url}?{urlencode(params)}",
            }
        )
    return offered


def foot_html(
    ref: QueueRef,
    scanned: int,
    matched: int,
    by_state: dict[str, int],
    query: str,
    *,
    can_act: bool,
    states: Sequence[str],
) -> str:
    return render_to_string(
        "bullpen/_search_group_foot.html",
        {
            "slug": ref.slug,
            "scanned": scanned,
            "matched": matched,
            "by_state": sorted(by_state.items()),
            "actions": match_actions(ref, by_state, query) if can_act else [],
            "states": states,
        },
    )
