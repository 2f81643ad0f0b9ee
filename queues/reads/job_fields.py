"""A BullMQ job hash, decoded into the shape Node's ``job.toJSON()`` has.

Fields named in ``BULLPEN["REDACT"]`` are masked here (:mod:`queues.reads.redaction`).
Job data is untrusted: any field may be missing, not JSON, nested too deeply to show, or cut
short by the list cap. Such fields keep their raw text and are named in ``invalid`` or
``truncated``; nothing raises.
This runs for every row of every list page, so it is written out plainly rather than driven
by tables.
"""

from __future__ import annotations

from typing import Any

from queues.config.redact_setting import configured_rules
from queues.reads.jsontext import loads_shown
from queues.reads.redaction import redact_job

# Hash fields BullMQ stores under short names (the long name is also read, for old writers).
HASH_ALIASES = {
    "atm": "attemptsMade",
    "ats": "attemptsStarted",
    "stc": "stalledCounter",
    "rjk": "repeatJobKey",
    "deid": "deduplicationId",
    "pb": "processedBy",
    "nrjid": "nextRepeatableJobId",
    "defa": "deferredFailure",
}
# Option names BullMQ stores short inside ``opts``.
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


class _Reader:
    __slots__ = ("get", "invalid", "truncated")

    def __init__(self, raw: dict[str, str], truncated: dict[str, int]) -> None:
        self.get = raw.get
        self.truncated = truncated
        self.invalid: list[str] = []

    def integer(self, name: str, short: str | None = None, default: int | None = 0) -> Any:
        text = self.get(short) if short else None
        if text is None:
            text = self.get(name)
        if text is None or text == "":
            return default
        if text.isascii() and text.isdigit():
            return int(text)
        try:
            return int(float(text))
        except ValueError:
            self.invalid.append(name)
            return text

    def json(self, name: str, default: Any) -> Any:
        text = self.get(name)
        if text is None:
            return default
        if name in self.truncated:
            return text
        try:
            return loads_shown(text)
        except ValueError:
            self.invalid.append(name)
            return text

    def text(self, name: str, short: str | None = None) -> str | None:
        value = self.get(short) if short else None
        return self.get(name) if value is None else value


def _opts(opts: Any) -> Any:
    if not isinstance(opts, dict):
        return opts
    for key in OPTS_ALIASES.keys() & opts.keys():
        opts[OPTS_ALIASES[key]] = opts.pop(key)
    # Node's Job sets this default on every job it reads; show what Node shows.
    opts.setdefault("attempts", 0)
    return opts


def job_from_hash(
    job_id: str, raw: dict[str, str], truncated: dict[str, int] | None = None
) -> dict[str, Any]:
    """Decode one job hash (``raw``: field → text). ``truncated`` names fields the reader cut."""
    cut = {HASH_ALIASES.get(k, k): v for k, v in truncated.items()} if truncated else {}
    read = _Reader(raw, cut)
    returnvalue = raw.get("returnvalue")
    if returnvalue is not None and "returnvalue" not in cut:
        # BullMQ stores the return value as JSON but reads back non-JSON text as it is.
        try:
            returnvalue = loads_shown(returnvalue)
        except ValueError:
            pass
    job = {
        "id": job_id,
        "name": raw.get("name"),
        "data": read.json("data", {}),
        "opts": _opts(read.json("opts", {})),
        "progress": read.json("progress", 0),
        "returnvalue": returnvalue,
        "stacktrace": read.json("stacktrace", []),
        "delay": read.integer("delay"),
        "priority": read.integer("priority"),
        "timestamp": read.integer("timestamp", default=None),
        "processedOn": read.integer("processedOn", default=None),
        "finishedOn": read.integer("finishedOn", default=None),
        "attemptsMade": read.integer("attemptsMade", "atm"),
        "attemptsStarted": read.integer("attemptsStarted", "ats"),
        "stalledCounter": read.integer("stalledCounter", "stc"),
        "failedReason": raw.get("failedReason"),
        "parentKey": raw.get("parentKey"),
        "parent": read.json("parent", None),
        "repeatJobKey": read.text("repeatJobKey", "rjk"),
        "deduplicationId": read.text("deduplicationId", "deid"),
        "processedBy": read.text("processedBy", "pb"),
        "nextRepeatableJobId": read.text("nextRepeatableJobId", "nrjid"),
        "deferredFailure": read.text("deferredFailure", "defa"),
    }
    invalid = read.invalid
    if "name" not in raw:
        invalid.append("name")
    if "timestamp" not in raw:
        invalid.append("timestamp")
    job["truncated"] = cut
    job["invalid"] = invalid
    # Every list row, job page, API answer, search match and live update is decoded here:
    # the one place fields named in REDACT are masked before they leave the server.
    rules = configured_rules()
    if rules is not None:
        redact_job(job, rules)
    return job


def job_duration_ms(job: dict[str, Any]) -> int | None:
    """Run time of a finished job: finishedOn - processedOn."""
    start, end = job.get("processedOn"), job.get("finishedOn")
    if isinstance(start, int) and isinstance(end, int):
        return end - start
    return None


def due_at_ms(score: Any) -> int | None:
    """When a delayed job runs, from its score in the delayed set: BullMQ stores the due time
    shifted left 12 bits plus a counter. The hash's ``timestamp + delay`` is that time only
    for a job added with a delay; a retry's backoff or a changed delay counts from the move."""
    if score is None or isinstance(score, (bool, Exception)):
        return None
    try:
        return int(float(score)) >> 12
    except (TypeError, ValueError, OverflowError):
        return None
