"""Completing a job in one Lua call, with the per-worker parts of the call built once.

bullmq's ``moveToCompleted`` rebuilds the same 13 queue keys, a closure or two and a JSON
encoder for every job, then goes through redis-py's script object (an import and a protocol
``isinstance`` per call) to send ``EVALSHA``. At concurrency 1 that was a tenth of the runner's
CPU per job. :class:`Completer` sends the same script the same keys and arguments
(``Scripts.moveToFinishedArgs`` for the ``completed`` target, bullmq 3.4.x), straight to the
worker's client; tests/runner/test_worker_runner.py compares the two.
"""

from __future__ import annotations

import json
import time
from typing import Any

import msgpack
from bullmq import Job
from bullmq.scripts import Scripts, raw2NextJobData
from redis.exceptions import NoScriptError

# The queue keys of moveToFinished, in the script's order, for the ``completed`` target.
_KEY_NAMES = (
    "wait",
    "active",
    "prioritized",
    "events",
    "stalled",
    "limiter",
    "delayed",
    "paused",
    "meta",
    "pc",
    "completed",
)


def keep_jobs(remove: Any) -> dict[str, Any]:
    """bullmq's ``getKeepJobs``: how many finished jobs the script keeps."""
    if type(remove) is int:
        return {"count": remove}
    if type(remove) is dict:
        return remove
    return {"count": 0} if remove else {"count": -1}


def return_value_json(value: Any) -> str:
    # json.dumps with non-default options builds a new encoder per call: not for None.
    if value is None:
        return "null"
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


class Completer:
    """``moveToFinished`` to ``completed`` for one worker's jobs."""

    def __init__(self, scripts: Scripts) -> None:
        self.scripts = scripts
        self.script = scripts.commands["moveToFinished"]
        self.client = scripts.redisClient
        keys = scripts.keys
        self.prefix: str = keys[""]
        self.head = [keys[name] for name in _KEY_NAMES]
        self.tail = [scripts.toKey("metrics:completed"), keys["marker"]]

    def args(
        self, job: Job, value: Any, remove: Any, token: str, fetch_next: bool
    ) -> tuple[list[Any], list[Any]]:
        """The script's keys and arguments, as ``Scripts.moveToCompletedArgs`` makes them."""
        opts = job.queue.opts
        metrics = opts.get("metrics")
        job_opts = job.opts
        packed = msgpack.packb(
            {
                "token": token,
                "keepJobs": keep_jobs(remove),
                "limiter": opts.get("limiter"),
                "lockDuration": opts.get("lockDuration"),
                "attempts": job.attempts,
                "attemptsMade": job.attemptsMade,
                "maxMetricsSize": metrics.get("maxDataPoints", "") if metrics is not None else "",
                "fpof": job_opts.get("failParentOnFailure", False),
                "cpof": job_opts.get("continueParentOnFailure", False),
                "idof": job_opts.get("ignoreDependencyOnFailure", False),
                "rdof": job_opts.get("removeDependencyOnFailure", False),
            },
            use_bin_type=True,
        )
        keys = [*self.head, self.prefix + str(job.id), *self.tail]
        args = [
            job.id,
            round(time.time() * 1000),
            "returnvalue",
            return_value_json(value) or "",
            "completed",
            "1" if fetch_next else "",
            self.prefix,
            packed,
        ]
        return keys, args

    async def complete(
        self, job: Job, value: Any, remove: Any, token: str, *, fetch_next: bool
    ) -> dict[str, Any]:
        """What ``RedisBackend.moveToCompleted`` returns: the next job's raw data (or None)
        and the finished-on timestamp."""
        keys, args = self.args(job, value, remove, token, fetch_next)
        try:
            result = await self.client.execute_command(
                "EVALSHA", self.script.sha, len(keys), *keys, *args
            )
        except NoScriptError:
            # Redis restarted or its scripts were flushed: redis-py's script object loads it.
            result = await self.script(keys=keys, args=args)
        if result is not None:
            if type(result) is int and result < 0:
                raise self.scripts.finishedErrors(
                    {
                        "code": result,
                        "jobId": job.id,
                        "command": "moveToFinished",
                        "state": "active",
                    }
                )
            result = raw2NextJobData(result)
        return {"result": result, "finishedOn": args[1]}
