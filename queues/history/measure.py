"""What one event means to history: which counts it moves and, for a finished job, its wait
and run times from the job's own timestamps (pure; the recorder reads the fields).

wait = processedOn - (timestamp + delay), the time from when the job was due to when its last
attempt started; run = finishedOn - processedOn. A job without those timestamps is counted but
not measured; a negative duration (a worker's clock behind another's, or Redis's) is dropped
and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

# The job hash fields read for each event, in this order.
FIELDS = ("timestamp", "delay", "processedOn", "finishedOn", "name", "atm")
# Events that finish a job, and those that only count.
FINISHED = ("completed", "failed")
COUNTED = ("stalled", "retried")
# A finished job whose hash is gone (removeOnComplete: true) before it was read.
UNKNOWN_NAME = "(unknown)"


@dataclass(frozen=True)
class Noted:
    """An event the recorder keeps until it has read the job's fields."""

    kind: str  # completed, failed, stalled, or retried (a failed attempt with attempts left)
    job_id: str
    at_ms: int  # when Redis stored the event
    # A back-filled job: its finish time from the finished set, no event.
    finished_on: int | None = None


@dataclass(frozen=True)
class Outcome:
    kind: str
    job_id: str
    name: str
    at_ms: int  # the finish time (finishedOn) when known, else the event's time
    wait_ms: int | None = None
    run_ms: int | None = None
    unmeasured: bool = False
    negative: int = 0

    @property
    def dedup_key(self) -> str:
        """A finished job is recorded once per finish, whoever noted it (event or back-fill)."""
        return f"{self.job_id}:{self.at_ms}"


def kind_of(event: str, fields: dict[str, str]) -> str | None:
    """The history kind of a stream event, or None. A failed attempt with attempts left comes
    back as ``waiting`` from ``active`` (retried at once) or ``delayed`` (with a backoff; the
    job's attempts then say whether it is a retry or a job added with a delay)."""
    if event in FINISHED or event == "stalled":
        return event
    if event == "waiting" and fields.get("prev") == "active":
        return "retried"
    if event == "delayed":
        return "delayed"
    return None


def _int(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


def outcome(noted: Noted, values: list[str | None]) -> Outcome | None:
    """What ``noted`` records, from its job's ``FIELDS``; None for a delayed job that is no
    retry."""
    got = dict(zip(FIELDS, values, strict=False))
    name = got.get("name")
    if name is None:
        name = UNKNOWN_NAME
    kind = noted.kind
    if kind == "delayed":
        if (_int(got.get("atm")) or 0) < 1:
            return None
        kind = "retried"
    if kind not in FINISHED:
        return Outcome(kind, noted.job_id, name, noted.at_ms)
    timestamp, delay = _int(got.get("timestamp")), _int(got.get("delay")) or 0
    processed, finished = _int(got.get("processedOn")), _int(got.get("finishedOn"))
    finished = finished if finished is not None else noted.finished_on
    at_ms = finished if finished is not None else noted.at_ms
    wait = run = None
    negative = 0
    if timestamp is not None and processed is not None:
        wait = processed - (timestamp + delay)
        if wait < 0:
            wait, negative = None, negative + 1
    if processed is not None and finished is not None:
        run = finished - processed
        if run < 0:
            run, negative = None, negative + 1
    unmeasured = (wait is None or run is None) and negative == 0
    return Outcome(kind, noted.job_id, name, at_ms, wait, run, unmeasured, negative)
