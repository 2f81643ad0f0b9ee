"""The ids of every job of a queue that a search matches, in the states an action may act on:
what "retry the matching failed jobs" counts first and then acts on.

Read with the same bounded scan as the search itself (queues/search/all_queues.py), so asking for a
count never holds Redis longer than a search step does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from queues.errors import BadParameter, RedisUnavailable
from queues.reads.keys import STATES, QueueRef
from queues.search.all_queues import Match, Progress, QueueSkipped, search_queues

# Jobs one action on matches may act on (the bulk list kinds' own limit).
MAX_MATCHES = 100_000

# What each action may act on, and what it acts on when no state is named. BullMQ retries
# failed and completed jobs and promotes delayed ones; a job a worker holds is never removed.
ACTION_STATES: dict[str, tuple[str, ...]] = {
    "retry": ("failed", "completed"),
    "promote": ("delayed",),
    "remove": tuple(state for state in STATES if state != "active"),
}
DEFAULT_STATES: dict[str, tuple[str, ...]] = {
    "retry": ("failed",),
    "promote": ("delayed",),
    "remove": ACTION_STATES["remove"],
}


@dataclass(frozen=True)
class Matching:
    ids: list[str]
    by_state: dict[str, int]
    scanned: int
    truncated: bool  # the search's budget or the most an action takes ended it early


def action_states(action: str, asked: Sequence[str]) -> tuple[str, ...]:
    """The states ``action`` acts on: those asked for (checked), else its default ones."""
    allowed = ACTION_STATES.get(action)
    if allowed is None:
        raise BadParameter(f"Unknown action on matches {action!r}")
    if not asked:
        return DEFAULT_STATES[action]
    refused = [state for state in asked if state not in allowed]
    if refused:
        raise BadParameter(f"{action} acts only on jobs that are: {', '.join(allowed)}")
    return tuple(dict.fromkeys(asked))


async def matching_ids(
    ref: QueueRef, states: Sequence[str], raw_query: str, *, budget: int | None = None
) -> Matching:
    ids: list[str] = []
    by_state: dict[str, int] = {}
    summary: Progress | None = None
    async for item in search_queues(
        [ref], states, raw_query, budget=budget, max_matches=MAX_MATCHES
    ):
        if isinstance(item, Match):
            ids.append(str(item.job["id"]))
            by_state[item.state] = by_state.get(item.state, 0) + 1
        elif isinstance(item, QueueSkipped):
            raise RedisUnavailable(f"Redis is unreachable: {item.error}")
        elif isinstance(item, Progress) and item.done:
            summary = item
    scanned = summary.scanned if summary else 0
    truncated = bool(summary and (summary.truncated or summary.full))
    return Matching(ids, by_state, scanned, truncated)


def question(action: str, states: Sequence[str], count: int) -> str:
    """What the page asks before acting: "Retry 37 matching failed jobs?"."""
    jobs = "job" if count == 1 else "jobs"
    verb = action.capitalize()
    if action == "remove" and tuple(states) == ACTION_STATES["remove"]:
        text = f"{verb} {count} matching {jobs}?"
    else:
        text = f"{verb} {count} matching {' or '.join(states)} {jobs}?"
    return f"{text} This cannot be undone." if action == "remove" else text
