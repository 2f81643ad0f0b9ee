"""A fetched job's hash as a bullmq ``Job``, built the way ``Job.fromJSON`` builds it, cheaper.

``Job.fromJSON`` parses four JSON fields with the standard library (progress and stacktrace
even when the hash has none), runs ``Job.__init__``'s defaults and then overwrites most of
them: about a tenth of the runner's CPU per job at concurrency 1. :func:`job_from_raw` sets
the same attributes to the same values (tests/runner/test_worker_runner.py compares them), parsing
with orjson where it can (queues/reads/jsontext.py). Jobs with parent or deduplication options,
which
``Job.__init__`` validates and rewrites, still go through ``Job.fromJSON``.
"""

from __future__ import annotations

from typing import Any

from bullmq import Job
from bullmq.backoffs import Backoffs
from bullmq.job import getReturnValue, optsFromJSON

from queues.reads.jsontext import loads_as_written as loads

# Options whose handling in Job.__init__ (validation, parent links) is left to bullmq.
_INIT_HANDLED = frozenset(
    {
        "parent",
        "failParentOnFailure",
        "continueParentOnFailure",
        "ignoreDependencyOnFailure",
        "removeDependencyOnFailure",
        "deduplication",
        "fpof",
        "cpof",
        "idof",
        "rdof",
        "de",
    }
)


def job_from_raw(queue: Any, raw: dict[str, Any], job_id: str | None = None) -> Job:
    """``Job.fromJSON(queue, raw, job_id)``."""
    stored = loads(raw.get("opts", "{}"))
    if type(stored) is not dict or not _INIT_HANDLED.isdisjoint(stored):
        return Job.fromJSON(queue, raw, job_id)
    opts = optsFromJSON(stored)
    data = loads(raw.get("data", "{}"))
    final_opts = {"attempts": 0, "delay": 0, **opts}
    final_opts["backoff"] = Backoffs.normalize(opts.get("backoff"))
    get = raw.get
    progress = get("progress")
    stacktrace = get("stacktrace")
    returnvalue = get("returnvalue")
    started = get("ats")
    processed = get("processedOn")
    finished = get("finishedOn")
    parent = get("parent")
    job = Job.__new__(Job)
    job.__dict__.update(
        {
            "name": get("name"),
            "id": job_id or get("id", b"").decode("utf-8"),
            "progress": 0 if progress is None else loads(progress),
            "timestamp": int(get("timestamp", "0")),
            "discarded": False,
            "opts": final_opts,
            "queue": queue,
            "delay": int(get("delay", "0")),
            "priority": int(get("priority", "0")),
            "attempts": opts.get("attempts", 1),
            "attemptsMade": int(get("attemptsMade") or get("atm") or "0"),
            "attemptsStarted": int(started) if started else 0,
            "stalledCounter": int(get("stc") or "0"),
            "data": data,
            "removeOnComplete": opts.get("removeOnComplete", True),
            "removeOnFail": opts.get("removeOnFail", False),
            "processedOn": int(processed) if processed else 0,
            "finishedOn": int(finished) if finished else 0,
            "returnvalue": getReturnValue(returnvalue) if type(returnvalue) is str else None,
            "deferredFailure": get("defa") or None,
            "failedReason": get("failedReason") or None,
            "repeatJobKey": get("rjk") or None,
            "token": None,
            "parentKey": get("parentKey") or None,
            "parent": loads(parent) if parent else None,
            "stacktrace": [] if stacktrace is None else loads(stacktrace),
            "deduplication_id": None,
            "backend": queue.backend,
            "queueQualifiedName": queue.qualifiedName,
        }
    )
    return job
