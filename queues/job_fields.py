"""A BullMQ job hash, decoded into the shape Node's ``job.toJSON()`` has.

Job data is untrusted: any field may be missing, not JSON, or cut short by the list cap. Such
fields keep their raw text and are named in ``invalid`` or ``truncated``; nothing raises.
"""

from __future__ import annotations

import json
from typing import Any

# Short names BullMQ stores in the hash, and in ``opts``, for long option names.
_HASH_ALIASES = {
    "atm": "attemptsMade",
    "ats": "attemptsStarted",
    "stc": "stalledCounter",
    "rjk": "repeatJobKey",
    "deid": "deduplicationId",
    "pb": "processedBy",
    "nrjid": "nextRepeatableJobId",
    "defa": "deferredFailure",
}
OPTS_ALIASES = {
    "fpof": "failParentOnFailure",
    "cpof": "continueParentOnFailure",
    "idof": "ignoreDependencyOnFailure",
    "rdof": "removeDependencyOnFailure",
    "kl": "keepLogs",
    "de": "deduplication",
    "tm": "telemetry",
    "omc": "maxChildrenToAdd",
}
_JSON_FIELDS = ("data", "opts", "progress", "stacktrace", "parent")
_INT_FIELDS = (
    "timestamp",
    "delay",
    "priority",
    "processedOn",
    "finishedOn",
    "attemptsMade",
    "attemptsStarted",
    "stalledCounter",
)
_INT_DEFAULTS = {
    "delay": 0,
    "priority": 0,
    "attemptsMade": 0,
    "attemptsStarted": 0,
    "stalledCounter": 0,
}
_TEXT_FIELDS = (
    "name",
    "failedReason",
    "parentKey",
    "repeatJobKey",
    "deduplicationId",
    "processedBy",
    "nextRepeatableJobId",
    "deferredFailure",
)


def _decode_opts(opts: Any) -> Any:
    if not isinstance(opts, dict):
        return opts
    return {OPTS_ALIASES.get(key, key): value for key, value in opts.items()}


def job_from_hash(
    job_id: str, raw: dict[str, str], truncated: dict[str, int] | None = None
) -> dict[str, Any]:
    """Decode one job hash (``raw``: field → text). ``truncated`` names fields the reader cut."""
    truncated = {_HASH_ALIASES.get(k, k): v for k, v in (truncated or {}).items()}
    fields = {_HASH_ALIASES.get(key, key): value for key, value in raw.items()}
    invalid: list[str] = []
    job: dict[str, Any] = {"id": job_id}

    for name in _TEXT_FIELDS:
        job[name] = fields.get(name)

    for name in _INT_FIELDS:
        text = fields.get(name)
        if text in (None, ""):
            job[name] = _INT_DEFAULTS.get(name)
            continue
        try:
            job[name] = int(text)  # type: ignore[arg-type]
        except ValueError:
            try:
                job[name] = int(float(text))  # type: ignore[arg-type]
            except ValueError:
                job[name] = text
                invalid.append(name)

    for name in _JSON_FIELDS:
        text = fields.get(name)
        if text is None:
            job[name] = {"data": {}, "opts": {}, "progress": 0, "stacktrace": [], "parent": None}[
                name
            ]
            continue
        if name in truncated:
            job[name] = text
            continue
        try:
            job[name] = json.loads(text)
        except ValueError:
            job[name] = text
            invalid.append(name)
    job["opts"] = _decode_opts(job["opts"])
    if isinstance(job["opts"], dict):
        # Node's Job sets this default on every job it reads; show what Node shows.
        job["opts"].setdefault("attempts", 0)

    # BullMQ stores the return value as JSON but reads back non-JSON text as it is.
    returnvalue = fields.get("returnvalue")
    if returnvalue is None or "returnvalue" in truncated:
        job["returnvalue"] = returnvalue
    else:
        try:
            job["returnvalue"] = json.loads(returnvalue)
        except ValueError:
            job["returnvalue"] = returnvalue

    if "name" not in fields:
        invalid.append("name")
    if "timestamp" not in fields:
        invalid.append("timestamp")
    job["truncated"] = truncated
    job["invalid"] = invalid
    return job


def job_duration_ms(job: dict[str, Any]) -> int | None:
    """Run time of a finished job (or so far, for none): finishedOn - processedOn."""
    start, end = job.get("processedOn"), job.get("finishedOn")
    if isinstance(start, int) and isinstance(end, int):
        return end - start
    return None
