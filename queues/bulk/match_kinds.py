"""Kinds that act on every job a search matches in a queue: retry, promote or remove them.

The matches are found when the action is asked for, with the search's bounded scan, and kept
as the action's fixed list of jobs (job_kinds.py); each is then acted on through the same
action as one job's button, so a job that changed state meanwhile is refused, not forced.
"""

from __future__ import annotations

from typing import Any

from queues.actions import job_actions
from queues.bulk.job_kinds import JobAction, JobList
from queues.bulk.kind import Prepared
from queues.errors import BadParameter, Conflict
from queues.reads.keys import QueueRef
from queues.search.matches import action_states, matching_ids
from queues.search.scan import parse_query


class SearchMatches(JobList):
    def __init__(self, action: str, act: JobAction) -> None:
        super().__init__(f"{action}-matches", act)
        self.action = action

    async def prepare(self, ref: QueueRef, params: dict[str, Any], anchor_ms: int) -> Prepared:
        query = str(params.get("query") or "")
        parse_query(query)  # an empty or broken query is refused before anything is read
        asked = params.get("states") or []
        if not isinstance(asked, list) or not all(isinstance(s, str) for s in asked):
            raise BadParameter("states must be a list of job states")
        states = action_states(self.action, asked)
        found = await matching_ids(ref, states, query)
        if not found.ids:
            raise Conflict(f"No {' or '.join(states)} job of {ref.slug!r} matches {query!r}")
        kept = {
            "query": query,
            "states": list(states),
            "scanned": found.scanned,
            "truncated": found.truncated,
        }
        return Prepared(kept, len(found.ids), found.ids)


RETRY_MATCHES = SearchMatches("retry", job_actions.retry_job)
PROMOTE_MATCHES = SearchMatches("promote", job_actions.promote_job)
REMOVE_MATCHES = SearchMatches("remove", job_actions.remove_job)
