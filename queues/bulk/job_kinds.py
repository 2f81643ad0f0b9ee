"""Kinds that act on a fixed list of jobs, one at a time, through the same action as one job's
button (so the same checks: an active job is not removed, a waiting one is not retried).

The list is fixed when the action is asked for (a failure group's jobs; later, the matches of a
search) and kept in Redis beside the record, with the index of the next job: a resumed action
goes on from there.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from queues.actions import job_actions
from queues.actions.result import ActionResult
from queues.bulk.counted import CancelRequested, LostAction
from queues.bulk.kind import Prepared, Work
from queues.errors import BadParameter, BullpenError, RedisUnavailable
from queues.reads.keys import QueueRef

JobAction = Callable[[QueueRef, str], Awaitable[ActionResult]]
MAX_JOBS = 100_000
_CHUNK = 200  # job ids read from Redis at a time
_REASONS = 50  # why jobs were refused: the first ones (one bad id must not bloat the record)


class JobList:
    def __init__(self, name: str, act: JobAction) -> None:
        self.name = name
        self.act = act

    async def prepare(self, ref: QueueRef, params: dict[str, Any], anchor_ms: int) -> Prepared:
        ids = params.pop("ids", None)
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise BadParameter("ids must be a non-empty list of job ids")
        if len(ids) > MAX_JOBS:
            raise BadParameter(f"at most {MAX_JOBS} jobs at once")
        return Prepared(params, len(ids), ids)

    async def run(self, work: Work) -> None:
        record = work.record
        reasons: dict[str, str] = dict(record.detail.get("results") or {})
        # After a stop, the first job may have been acted on just before it: if it is refused
        # now (already retried, already removed), whether by this action is unknown.
        unsure = record.next > 0 and work.resumed
        await work.check()
        while record.next < record.total:
            chunk = await work.store.job_ids(record.id, record.next, record.next + _CHUNK - 1)
            if not chunk:
                return
            for job_id in chunk:
                moved, reason = await self._act(work.ref, job_id)
                changed = ""
                if not moved and unsure:
                    record.detail["uncertain"] = [*record.detail.get("uncertain", []), job_id]
                    changed = json.dumps(record.detail)
                elif not moved and len(reasons) < _REASONS:
                    reasons[job_id] = reason
                    record.detail["results"] = reasons
                    changed = json.dumps(record.detail)
                unsure = False
                owned, cancel = await work.store.commit_job(
                    record.id, work.owner, moved, record.next + 1, changed
                )
                record.next += 1
                if moved:
                    record.count += 1
                else:
                    record.refused += 1
                if not owned:
                    raise LostAction
                if cancel:
                    raise CancelRequested
                await work.progress()

    async def _act(self, ref: QueueRef, job_id: str) -> tuple[bool, str]:
        try:
            await self.act(ref, job_id)
        except RedisUnavailable:
            raise  # not the job's fault: the runner tries again from this job
        except BullpenError as error:
            return False, str(error)
        return True, ""


RETRY_GROUP = JobList("retry-group", job_actions.retry_job)
REMOVE_GROUP = JobList("remove-group", job_actions.remove_job)
