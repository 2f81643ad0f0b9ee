"""What an audit row's action did, in words, from the detail the action kept: the values a
limit had and got, the query a bulk action on matches acted on, the group a group action
took. Shown on the audit page beside the action's name."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext


def _concurrency(value: Any) -> str:
    return str(value) if isinstance(value, int) else gettext("none")


def _rate_limit(value: Any) -> str:
    if not isinstance(value, dict):
        return gettext("none")
    return gettext("%(max)s per %(duration)s ms") % {
        "max": value.get("max"),
        "duration": value.get("duration"),
    }


def _change(before: str, after: str) -> str:
    return f"{before} → {after}"


def summary(action: str, detail: Any) -> list[str]:
    """Short phrases, each one fact; none when the detail holds nothing to say."""
    if not isinstance(detail, dict):
        return []
    said: list[str] = []
    if action == "concurrency" and "concurrency" in detail:
        change = _change(
            _concurrency(detail.get("previous")), _concurrency(detail.get("concurrency"))
        )
        said.append(gettext("global concurrency: %(change)s") % {"change": change})
    if action == "rate-limit" and "rateLimit" in detail:
        change = _change(_rate_limit(detail.get("previous")), _rate_limit(detail.get("rateLimit")))
        said.append(gettext("rate limit: %(change)s") % {"change": change})
    if action.endswith("-matches") and "query" in detail:
        said.append(gettext("query: %(query)s") % {"query": detail["query"] or "*"})
    states = detail.get("states")
    if action.endswith("-matches") and isinstance(states, list) and states:
        said.append(gettext("states: %(states)s") % {"states": ", ".join(map(str, states))})
    if detail.get("group"):
        said.append(gettext("group: %(group)s") % {"group": detail["group"]})
    if action == "pause" and detail.get("reason"):
        said.append(gettext("reason: %(reason)s") % {"reason": detail["reason"]})
    if action == "retry" and detail.get("resetAttempts"):
        said.append(gettext("with fresh attempts"))
    elif action == "retry" and detail.get("exhausted"):
        said.append(gettext("one more attempt: its attempts were used"))
    return said
